// Integration: MqttSource against a real mosquitto (test/helpers/mosquitto.ts). Lives in test/
// because core/ may not import test helpers (scripts/check-imports.mjs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.ts';
import { Journal, journalSink } from '../../core/ingest/journal.ts';
import { MqttSource, type MqttSourceOptions, type Timers } from '../../core/ingest/mqtt-source.ts';

const SITE = 's1';
const USERS = { tilstand: 'til-pw', inventory: 'inv-pw', operations: 'ops-pw', commerce: 'com-pw', procurement: 'pro-pw' };
const MODULES = ['inventory', 'operations', 'commerce', 'procurement'] as const;
const mosq: MosquittoHandle | undefined = await startMosquitto({ users: USERS, site: SITE });
afterAll(async () => {
  await mosq?.stop();
});

let dir: string;
let journal: Journal;
const cleanups: Array<() => Promise<unknown>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-source-'));
  journal = Journal.open(dir);
});
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Polls `cond` every 20 ms; fails after `timeoutMs` with `what`. */
async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function source(url: string, clientId: string, modules: readonly string[], extra: Partial<MqttSourceOptions> = {}): MqttSource {
  const s = new MqttSource({
    url,
    clientId,
    groups: modules.map((m) => ({ name: m, topics: [`tilstand/${SITE}/events/${m}/#`] })),
    sink: journalSink(journal),
    username: 'tilstand',
    password: USERS.tilstand,
    backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    ...extra,
  });
  cleanups.push(() => s.stop());
  s.start();
  return s;
}

async function publisher(url: string, module: keyof typeof USERS): Promise<MqttClient> {
  const c = connect(url, { username: module, password: USERS[module], protocolVersion: 5, reconnectPeriod: 0 });
  c.on('error', () => undefined);
  cleanups.push(() => c.endAsync(true));
  await new Promise<void>((resolve, reject) => {
    c.once('connect', () => resolve());
    c.once('error', reject);
  });
  return c;
}

/** Publishes `n` QoS 1 events (payload = seq), at most 200 awaiting PUBACK at once. */
async function publishMany(c: MqttClient, module: string, n: number, from = 0): Promise<void> {
  const window = 200;
  for (let i = from; i < from + n; i += window) {
    const batch = [];
    for (let k = i; k < Math.min(from + n, i + window); k++) {
      batch.push(c.publishAsync(`tilstand/${SITE}/events/${module}/main`, JSON.stringify({ seq: k }), { qos: 1 }));
    }
    await Promise.all(batch);
  }
}

const subscribed = (s: MqttSource) => s.stats().every((g) => g.subscribes >= 1);

describe.skipIf(!mosq)('MqttSource against mosquitto', () => {
  it('keeps its session: events published while it is offline arrive after it reconnects (beyond 1000 queued)', async () => {
    const url = mosq!.url;
    const siteUrl = mosq!.siteUrl;
    const s1 = source(siteUrl, 'til-persist', ['inventory', 'operations']);
    await until('subscriptions', () => subscribed(s1));
    await s1.stop();

    const inv = await publisher(url, 'inventory');
    const ops = await publisher(url, 'operations');
    await Promise.all([publishMany(inv, 'inventory', 3000), publishMany(ops, 'operations', 500)]);

    const s2 = source(siteUrl, 'til-persist', ['inventory', 'operations']);
    await until('3500 journaled', () => journal.stats().events === 3500, 30_000);
    expect(s2.stats().map((g) => g.sessionsLost)).toEqual([0, 0]);
    const byModule: Record<string, number[]> = { inventory: [], operations: [] };
    for (const e of journal.readAfter(0n)) byModule[e.module]!.push(JSON.parse(e.payload.toString()).seq);
    expect(byModule.inventory).toEqual(Array.from({ length: 3000 }, (_, i) => i)); // all, in stream order
    expect(byModule.operations).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('acks only after the sink: a failed sink sends no PUBACK, so the broker redelivers', async () => {
    const url = mosq!.url;
    const siteUrl = mosq!.siteUrl;
    let failNext = true;
    const calls: string[] = [];
    const sink = journalSink(journal);
    const s = source(siteUrl, 'til-ack', ['inventory'], {
      sink: async (topic, payload) => {
        calls.push(payload.toString());
        if (failNext) {
          failNext = false;
          throw new Error('injected journal failure');
        }
        return sink(topic, payload);
      },
    });
    await until('subscription', () => subscribed(s));
    const inv = await publisher(url, 'inventory');
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/main`, 'm1', { qos: 1 });
    await until('m1 journaled after redelivery', () => journal.stats().events === 1);
    const st = s.stats()[0]!;
    expect(st.sinkFailures).toBe(1);
    expect(st.connects).toBe(2); // the connection was dropped instead of acking, then resumed
    expect(st.sessionsLost).toBe(0);
    expect(calls).toEqual(['m1', 'm1']);
    expect([...journal.readAfter(0n)].map((e) => e.payload.toString())).toEqual(['m1']);
  });

  /** Timers that run at once and record the delays asked for (the backoff is what is checked). */
  function recordingTimers(requested: number[]): Timers {
    return {
      setTimeout: (f, ms) => {
        requested.push(ms);
        return setTimeout(f, 1);
      },
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    };
  }

  it('backs off when the sink keeps failing right after each CONNACK (the journal full), not reconnect at the first delay for good', async () => {
    const requested: number[] = [];
    const s = source(mosq!.siteUrl, 'tilstand-backoff-sink', ['inventory'], {
      sink: async () => {
        throw new Error('journal: disk full');
      },
      backoff: { initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2, jitterRatio: 0 },
      timers: recordingTimers(requested),
    });
    await until('subscribed', () => s.stats()[0]!.subscribes === 1);
    // The event fails the sink; every reconnect gets it redelivered from the session.
    const pub = await publisher(mosq!.url, 'inventory');
    await pub.publishAsync(`tilstand/${SITE}/events/inventory/main`, JSON.stringify({ seq: 1 }), { qos: 1 });
    await until('6 reconnects scheduled', () => requested.length >= 6);
    await s.stop();
    expect(s.stats()[0]!.sinkFailures).toBeGreaterThanOrEqual(6);
    expect(requested.slice(0, 6)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('handles one packet per connection at a time (the reason for several connections)', async () => {
    const url = mosq!.url;
    const siteUrl = mosq!.siteUrl;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const s = source(siteUrl, 'til-serial', ['inventory'], {
      sink: async (_t, p) => {
        seen.push(p.toString());
        if (p.toString() === 'a') await gate;
      },
    });
    await until('subscription', () => subscribed(s));
    const inv = await publisher(url, 'inventory');
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/main`, 'a', { qos: 1 });
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/main`, 'b', { qos: 1 });
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual(['a']); // 'b' waits for 'a''s ack
    release();
    await until('b handled', () => seen.length === 2);
    expect(seen).toEqual(['a', 'b']);
  });

  it('resubscribes when the broker lost the session (sessionPresent = false)', async () => {
    const volatile = await startMosquitto({ users: USERS, site: SITE, persistence: false });
    cleanups.push(() => volatile!.stop());
    const s = source(volatile!.siteUrl, 'til-lost', ['inventory']);
    await until('subscription', () => subscribed(s));
    await volatile!.restart(); // no persistence: the session and its subscription are gone
    await until('resubscribed', () => s.stats()[0]!.subscribes === 2);
    const st = s.stats()[0]!;
    expect(st.sessionsLost).toBe(1);
    expect(st.reconnectDelaysMs.length).toBeGreaterThanOrEqual(1);
    const inv = await publisher(volatile!.url, 'inventory');
    await inv.publishAsync(`tilstand/${SITE}/events/inventory/main`, 'after', { qos: 1 });
    await until('event after resubscribe', () => journal.stats().events === 1);
  });

  it('measures drain rate of an offline backlog: 1 vs 4 connections, with and without the journal (bounded)', async () => {
    const url = mosq!.url;
    const siteUrl = mosq!.siteUrl;
    const perModule = 1000;
    const drain = async (clientId: string, modules: readonly string[], withJournal: boolean) => {
      let handled = 0;
      const sink = journalSink(journal);
      const s0 = source(siteUrl, clientId, modules);
      await until('subscriptions', () => subscribed(s0));
      await s0.stop();
      await Promise.all(modules.map(async (m) => publishMany(await publisher(url, m as keyof typeof USERS), m, perModule)));
      const before = journal.stats();
      const t0 = performance.now();
      const s = source(siteUrl, clientId, modules, {
        sink: async (t, p) => {
          if (withJournal) await sink(t, p);
          handled++;
        },
      });
      const total = perModule * modules.length;
      await until(`${total} handled`, () => handled === total, 60_000);
      const rate = total / ((performance.now() - t0) / 1000);
      await s.stop();
      const after = journal.stats();
      const perCommit = withJournal ? (after.events - before.events) / (after.commits - before.commits) : 0;
      return { rate, perCommit };
    };
    const one = await drain('til-bench-1', ['inventory'], true);
    const four = await drain('til-bench-4', MODULES, true);
    const fourNoJ = await drain('til-bench-4n', MODULES, false);
    console.log(
      `[mqtt-source drain] mosquitto backlog, QoS1: 1 connection + journal ${one.rate.toFixed(0)} msg/s ` +
        `(${one.perCommit.toFixed(2)} events/commit); 4 connections + journal ${four.rate.toFixed(0)} msg/s ` +
        `(${four.perCommit.toFixed(2)} events/commit); 4 connections, no journal ${fourNoJ.rate.toFixed(0)} msg/s`,
    );
    expect(one.perCommit).toBeLessThanOrEqual(1.0001); // one packet at a time per connection
    expect(four.perCommit).toBeGreaterThan(1); // waits of several connections share a commit
  });
});
