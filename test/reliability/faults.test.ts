// Fault suite: the disk and the network fail underneath the site.
//   1. Table store on a FileIO that fails writes with ENOSPC/EIO, tears them, or fails the fsync:
//      every failing call ends in a clear IOError (or a later retry succeeds), never in wrong
//      data — after the fault is cleared the table reopens and equals the model (the old state
//      if the commit did not happen, the new one if it did; nothing in between).
//   2. The SQLite journal and the sync outbox at their page limit (`PRAGMA max_page_count`, a
//      tiny disk): appends fail with a clear error and nothing acknowledged is lost.
//   3. The embedded broker restarts mid-stream on the same port; publishers reconnect and resend;
//      every PUBACKed event is in state exactly once.
//   4. HQ behind a loopback proxy that cuts connections, stalls them past the request timeout or
//      answers 503: sync retries and HQ ends complete (mirrored back and compared).
// Reproduce: TILSTAND_SEED_FAULTS=<seed> (printed).

import * as net from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedBroker, type CredentialStore } from '../../core/ingest/broker.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../../core/ingest/seed-contracts.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';
import { Catalog, LsmError, RowKind, Table, localFileIO } from '../../core/lsm/index.ts';
import { SyncEngine } from '../../core/sync/engine.ts';
import { mirrorSite } from '../../core/sync/hq/mirror.ts';
import { sitePrefix } from '../../core/sync/names.ts';
import { openOutboxDb, Outbox } from '../../core/sync/outbox.ts';
import { S3Target } from '../../core/sync/targets/s3.ts';
import { makeSite, startS3 } from '../../core/sync/test-support/site-fixture.ts';
import { choose, int, LONG, mulberry32, pick, removeTempDirs, sleep, suiteSeed, tempDir, trialSeed, until, writeSummary } from './lib/common.ts';
import { FaultyFileIO, type Fault } from './lib/faulty-io.ts';
import { Publisher } from './lib/publisher.ts';
import { canon, envelope, jobAfter, rowsOf } from './lib/site-harness.ts';

const seed = suiteSeed('faults');
const rand = mulberry32(seed);
const started = Date.now();
const tally = { tableTrials: 0, tableFaults: 0, commitsLanded: 0, commitsRefused: 0, faultKinds: {} as Record<string, number>, journalRefusals: 0, journalAcked: 0, outboxRefusals: 0, brokerRestarts: 0, brokerEvents: 0, hqRequestsFaulted: 0, lost: 0, failures: 0 };

afterAll(() => {
  writeSummary({
    suite: 'faults',
    proves: 'ENOSPC/EIO/torn writes/failed fsyncs in the table store, a full journal and outbox, a broker restart and a failing HQ end in clear errors or retries, never in wrong or lost data',
    seed,
    trials: tally.tableTrials + tally.brokerRestarts + 2,
    faultsInjected: tally.tableFaults + tally.journalRefusals + tally.outboxRefusals + tally.brokerRestarts + tally.hqRequestsFaulted,
    inputsTried: tally.journalAcked + tally.brokerEvents,
    lost: tally.lost,
    durationMs: Date.now() - started,
    details: { ...tally, long: LONG },
    passed: tally.failures === 0 && tally.lost === 0,
  });
  removeTempDirs();
});

const tracked = (name: string, f: () => Promise<void>, timeout: number) =>
  it(
    name,
    async () => {
      try {
        await f();
      } catch (e) {
        tally.failures++;
        throw e;
      }
    },
    timeout,
  );

describe('faults: table store on a failing disk', () => {
  tracked(
    'ENOSPC, EIO, torn writes and failed fsyncs end in IOError or a retry, never in wrong data',
    async () => {
      const TRIALS = pick(16, 400);
      const FAULTS: Fault[] = ['ENOSPC', 'EIO', 'torn', 'fsync', 'remove-EIO'];
      for (let trial = 0; trial < TRIALS; trial++) {
        const ts = trialSeed(rand);
        const r = mulberry32(ts);
        const dir = tempDir('faults-table');
        const io = new FaultyFileIO();
        const catalog = new Catalog(dir, { fileIO: io });
        catalog.createDatabase('db');
        const id = { database: 'db', table: 't' };
        catalog.createTable(id, {
          fields: [
            { name: 'k', type: 'INT NOT NULL' },
            { name: 'v', type: 'STRING' },
          ],
          primaryKeys: ['k'],
          options: { bucket: '2', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '3', 'snapshot.time-retained': '1 ms', 'num-sorted-run.compaction-trigger': '2' },
        });
        let model = new Map<number, string>();
        const expectEquals = (t: Table, m: Map<number, string>) => JSON.stringify(canon(rowsOf(t))) === JSON.stringify(canon([...m].map(([k, v]) => ({ k, v }))));
        let faultsThisTrial = 0;
        for (let step = 0; step < 10; step++) {
          const table = catalog.getTable(id);
          const pending = new Map(model);
          // Arm a fault on the n-th write call of this step (or none).
          let calls = 0;
          const target = r() < 0.6 ? int(r, 0, 12) : -1;
          const kind = choose(r, FAULTS);
          io.prefixFraction = r();
          io.decide = (op) => {
            if (kind === 'remove-EIO' ? op !== 'remove' : op === 'remove') return undefined;
            return calls++ === target ? kind : undefined;
          };
          const before = io.injected.length;
          let error: unknown;
          let w: ReturnType<Table['newWriter']> | undefined;
          try {
            w = table.newWriter();
            for (let i = int(r, 1, 40); i > 0; i--) {
              const k = int(r, 0, 60);
              if (r() < 0.15) {
                w.write([k, null], RowKind.DELETE);
                pending.delete(k);
              } else {
                const v = `v${step}-${i}-${'x'.repeat(int(r, 0, 30))}`;
                w.write([k, v], RowKind.INSERT);
                pending.set(k, v);
              }
            }
            w.commit();
          } catch (e) {
            error = e;
          } finally {
            try {
              w?.close();
            } catch {
              // a failing close is part of the fault
            }
          }
          io.decide = () => undefined;
          const injected = io.injected.length > before;
          if (injected) {
            tally.tableFaults++;
            faultsThisTrial++;
            tally.faultKinds[kind] = (tally.faultKinds[kind] ?? 0) + 1;
          }
          if (error !== undefined) {
            // A clear error: the table store's IOError naming the file (or its wrapper).
            expect(error, `trial seed ${ts} step ${step}: ${String(error)}`).toBeInstanceOf(LsmError);
            expect(['IOError', 'Conflict'], `trial seed ${ts}: ${String(error)}`).toContain((error as LsmError).kind);
            expect(injected, `an error without an injected fault (trial seed ${ts}): ${String(error)}`).toBe(true);
          }
          // Reopen on a healthy disk: the table is the old model or the new one, never anything else.
          const fresh = Table.open(join(dir, 'db.db', 't'), { fileIO: localFileIO });
          const isNew = expectEquals(fresh, pending);
          const isOld = expectEquals(fresh, model);
          if (!isNew && !isOld) tally.lost++;
          expect(isNew || isOld, `trial seed ${ts} step ${step}: table is neither the old nor the new state after ${kind} (error: ${String(error)})`).toBe(true);
          if (error === undefined) expect(isNew, `trial seed ${ts}: a commit that returned must be visible`).toBe(true);
          if (isNew && error !== undefined) tally.commitsLanded++;
          if (!isNew && error !== undefined) tally.commitsRefused++;
          model = isNew ? pending : model;
          for (const sid of fresh.snapshots.listIds()) fresh.scanRows({ snapshotId: sid });
        }
        tally.tableTrials++;
        if (trial % 10 === 0) console.log(`[reliability faults] table trial ${trial + 1}/${TRIALS} seed ${ts}: ${faultsThisTrial} faults`);
      }
      expect(tally.tableFaults).toBeGreaterThan(TRIALS);
    },
    pick(120_000, 1_800_000),
  );
});

describe('faults: SQLite at its page limit', () => {
  tracked(
    'the journal refuses appends with a clear error when full; every acknowledged event survives',
    async () => {
      const dir = tempDir('faults-journal');
      const journal = Journal.open(dir);
      const db = (journal as unknown as { db: Database.Database }).db; // test-only: the journal's own connection
      const pages = Number(db.pragma('page_count', { simple: true }));
      db.pragma(`max_page_count = ${pages + 40}`);
      const acked = new Map<bigint, string>();
      const errors: string[] = [];
      for (let i = 0; i < 4000 && errors.length < 20; i++) {
        const payload = `{"i":${i},"pad":"${'p'.repeat(int(rand, 50, 900))}"}`;
        try {
          const pos = await journal.append({ topic: 'tilstand/s/events/inventory/stock', payload: Buffer.from(payload), receivedAtMs: Date.now(), module: 'inventory', stream: 'stock' });
          acked.set(pos, payload);
        } catch (e) {
          errors.push(String((e as Error).message));
        }
      }
      expect(errors.length, 'appends refused once full').toBeGreaterThan(0);
      expect(errors[0]).toMatch(/full|disk|SQLITE_FULL/i);
      tally.journalRefusals += errors.length;
      tally.journalAcked += acked.size;
      // Room again: appends succeed.
      db.pragma(`max_page_count = ${pages + 100_000}`);
      const after = await journal.append({ topic: 'tilstand/s/events/inventory/stock', payload: Buffer.from('{"after":1}'), receivedAtMs: Date.now(), module: 'inventory', stream: 'stock' });
      acked.set(after, '{"after":1}');
      journal.close();
      const again = Journal.open(dir);
      const seen = new Map<bigint, string>();
      for (const e of again.readAfter(0n)) seen.set(e.position, e.payload.toString());
      again.close();
      let missing = 0;
      for (const [pos, p] of acked) if (seen.get(pos) !== p) missing++;
      tally.lost += missing;
      expect(missing, 'acknowledged events missing after reopen').toBe(0);
    },
    60_000,
  );

  tracked(
    'the sync outbox refuses new rows with a clear error when full; rows already added survive',
    async () => {
      const dir = tempDir('faults-outbox');
      const db = openOutboxDb(join(dir, 'site.db'));
      const outbox = new Outbox(db);
      const pages = Number(db.pragma('page_count', { simple: true }));
      db.pragma(`max_page_count = ${pages + 20}`);
      let added = 0;
      const errors: string[] = [];
      for (let i = 0; i < 5000 && errors.length < 5; i++) {
        try {
          outbox.add([{ unit: `snapshot:t:${i}`, phase: 1, op: 'put', priority: 1, table_name: 't', src: `/x/${'f'.repeat(200)}-${i}`, key: `site_s.db/t/f-${i}`, size: i }], Date.now());
          added++;
        } catch (e) {
          errors.push((e as Error).message);
        }
      }
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]).toMatch(/full|SQLITE_FULL/i);
      tally.outboxRefusals += errors.length;
      db.close();
      const again = openOutboxDb(join(dir, 'site.db'));
      const n = Number(again.prepare('SELECT COUNT(*) FROM sync_outbox').pluck().get());
      again.close();
      tally.lost += Math.max(0, added - n);
      expect(n).toBe(added);
    },
    60_000,
  );
});

describe('faults: the broker restarts mid-stream', () => {
  tracked(
    'publishers reconnect and resend; every PUBACKed event is in state exactly once',
    async () => {
      const dir = tempDir('faults-broker');
      const journal = Journal.open(dir);
      const contracts = new ContractRegistry(join(dir, 'contracts'));
      for (const c of SEED_CONTRACTS) contracts.register(c);
      const catalog = new Catalog(join(dir, 'warehouse'));
      const ingestor = Ingestor.open({
        site: 's1', catalog, database: 'site_s1', journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES],
        budgets: ['stock', 'work_queue', 'resources', 'dead_letters'].map((table) => ({ table, budgetMs: 200, decision: 'fault test', confirmedBy: 'test' })),
      });
      const tick = setInterval(() => ingestor.tick(), 50);
      const credentials: CredentialStore = { verify: async (u) => (['operations', 'inventory'].includes(u) ? { name: u, kind: 'module', module: u } : null) };
      const makeBroker = (port: number) => new EmbeddedBroker({ site: 's1', credentials, onEvent: (t, p) => ingestor.accept(t, p), port });
      let broker = makeBroker(0);
      const port = await broker.listen();
      const url = `mqtt://127.0.0.1:${port}`;
      const ops = await Publisher.connect({ url, username: 'operations', password: 'x', clientId: 'f-ops', reconnect: true });
      const inv = await Publisher.connect({ url, username: 'inventory', password: 'x', clientId: 'f-inv', reconnect: true });
      const N = pick(1500, 15_000);
      const RESTARTS = pick(3, 30);
      const restartAt = new Set(Array.from({ length: RESTARTS }, () => int(rand, 50, N - 50)));
      tally.brokerRestarts += restartAt.size;
      const acks: Promise<boolean>[] = [];
      // As a module's outbox: a publish that failed (connection gone, no session at the new broker)
      // is sent again until it is acknowledged; duplicates are the Ingestor's to drop.
      let resent = 0;
      const sendUntilAcked = async (pub: Publisher, topic: string, payload: string): Promise<boolean> => {
        for (let attempt = 0; attempt < 50; attempt++) {
          if (await pub.send(topic, payload, 10_000)) return true;
          resent++;
          await sleep(50);
        }
        return false;
      };
      const stock = new Map<string, { qty: number; seq: number }>();
      for (let i = 1; i <= N; i++) {
        if (i % 2 === 0) {
          acks.push(sendUntilAcked(ops, 'tilstand/s1/events/operations/jobs', envelope('operations', 'jobs', 'operations.jobs', i / 2, jobAfter(`J-${i / 2}`, i))));
        } else {
          const seq = (i + 1) / 2;
          const key = `I-${i % 9}`;
          stock.set(key, { qty: i, seq });
          acks.push(sendUntilAcked(inv, 'tilstand/s1/events/inventory/stock', envelope('inventory', 'stock', 'inventory.stock', seq, { item: key, location: 'L1', qty: i })));
        }
        if (i % 100 === 0) await sleep(1);
        if (restartAt.has(i)) {
          await broker.close();
          await sleep(int(rand, 0, 300));
          broker = makeBroker(port);
          await broker.listen();
        }
      }
      const results = await Promise.all(acks);
      tally.brokerEvents += N;
      console.log(`[reliability faults] broker restarts: ${restartAt.size}, publishes resent after a failure: ${resent}`);
      expect(results.filter((x) => !x).length, 'publishes never acknowledged').toBe(0);
      await until('held events drained', () => ingestor.health().heldEvents ?? 0, (n) => n === 0, 20_000);
      ingestor.commitAll();
      const wq = rowsOf(catalog.getTable({ database: 'site_s1', table: 'work_queue' }));
      const st = rowsOf(catalog.getTable({ database: 'site_s1', table: 'stock' }));
      const jobs = N / 2;
      const wrongJobs = jobs - new Set(wq.map((r) => r.job_id)).size + Math.abs(wq.length - jobs);
      const wrongStock = [...stock].filter(([k, m]) => !st.some((r) => r.item === k && r.on_hand === m.qty && r.inventory_seq === m.seq)).length;
      tally.lost += wrongJobs + wrongStock;
      clearInterval(tick);
      await Promise.all([ops.close(), inv.close()]);
      await broker.close();
      ingestor.close();
      journal.close();
      expect(wq.length).toBe(jobs);
      expect(wrongJobs).toBe(0);
      expect(wrongStock).toBe(0);
    },
    pick(90_000, 1_800_000),
  );
});

/**
 * A loopback proxy in front of HQ. Each HTTP request (a client chunk starting with a method) draws:
 * pass, cut (the connection is destroyed part-way), stall (never forwarded: the client's request
 * timeout fires) or a 503 answer, then close. Keep-alive connections therefore fail mid-stream too.
 */
async function chaosProxy(upstreamPort: number, r: () => number, faultFraction: number, modes: readonly ('cut' | 'stall' | '503')[] = ['cut', '503']) {
  const stats = { connections: 0, requests: 0, cut: 0, stalled: 0, errors: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    stats.connections++;
    sockets.add(client);
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    sockets.add(upstream);
    let stalled = false;
    client.on('error', () => undefined).on('close', () => (sockets.delete(client), upstream.destroy()));
    upstream.on('error', () => undefined).on('close', () => (sockets.delete(upstream), client.destroy()));
    client.on('data', (b: Buffer) => {
      if (stalled) return;
      if (/^(PUT|GET|HEAD|POST|DELETE) /.test(b.subarray(0, 8).toString('latin1'))) {
        stats.requests++;
        if (r() < faultFraction) {
          const mode = choose(r, modes);
          if (mode === 'stall') {
            stats.stalled++;
            stalled = true;
            return;
          }
          if (mode === '503') {
            stats.errors++;
            const body = '<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>';
            client.end(`HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
            upstream.destroy();
            return;
          }
          stats.cut++;
          upstream.write(b.subarray(0, int(r, 0, b.length)));
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => client.write(b));
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return {
    port: (server.address() as net.AddressInfo).port,
    stats,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}

describe('faults: HQ cut, stalled, failing', () => {
  tracked(
    'sync through a proxy that cuts connections mid-request and answers 503 ends with HQ complete',
    async () => {
      const s3 = await startS3();
      const proxy = await chaosProxy(s3.port, mulberry32(trialSeed(rand)), 0.25);
      const fx = makeSite('fx', { rows: 3000, data: tempDir('faults-hqsite') });
      const creds = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
      const target = new S3Target({ bucket: s3.bucket, endpoint: `http://127.0.0.1:${proxy.port}`, ...creds, writePrefix: sitePrefix(fx.site), requestTimeoutMs: 400 });
      const engine = new SyncEngine({ dataDir: fx.data, site: fx.site, target, retry: { baseMs: 5, maxMs: 50, jitter: 0.5 }, scheduledTags: null });
      try {
        fx.table('stock').createTag('faults-tag');
        await engine.enqueueSnapshotSync();
        for (let i = 0; i < 2000 && engine.status().pendingItems > 0; i++) {
          await engine.runOnce();
          if (engine.status().pendingItems > 0) await sleep(10);
        }
        expect(engine.status().pendingItems, `pending after retries: ${engine.status().lastError}`).toBe(0);
      } finally {
        await engine.close();
      }
      tally.hqRequestsFaulted += proxy.stats.cut + proxy.stats.stalled + proxy.stats.errors;
      console.log(`[reliability faults] HQ proxy: ${JSON.stringify(proxy.stats)}`);
      expect(proxy.stats.cut + proxy.stats.stalled + proxy.stats.errors).toBeGreaterThan(0);
      // Mirror HQ back (directly, no proxy) and compare every table with the site.
      const mirror = tempDir('faults-mirror');
      mkdirSync(mirror, { recursive: true });
      await mirrorSite(new S3Target({ bucket: s3.bucket, endpoint: s3.endpoint, ...creds }), fx.site, mirror);
      for (const name of ['stock', 'approval_inbox', 'decision_log']) {
        const h = Table.open(join(mirror, sitePrefix(fx.site), name));
        const same = JSON.stringify(canon(rowsOf(h))) === JSON.stringify(canon(rowsOf(fx.table(name))));
        if (!same) tally.lost++;
        expect(same, `HQ ${name} equals the site`).toBe(true);
      }
      expect(canon(rowsOf(Table.open(join(mirror, sitePrefix(fx.site), 'stock')), { tag: 'faults-tag' }))).toEqual(canon(rowsOf(fx.table('stock'), { tag: 'faults-tag' })));
      await proxy.close();
      await s3.close();
    },
    pick(120_000, 1_800_000),
  );
});
