// Test support: a site data directory with real tables (Paimon format, core/lsm), an s3rver on
// loopback that counts completed PUTs per key and stores a PUT whole or not at all, a TCP proxy that cuts connections at seeded byte
// counts, and a seeded PRNG. Not imported by production code.

import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import S3rver from 's3rver';
import { Catalog, RowKind, type Table } from '../../lsm/index.ts';
import { mulberry32 } from '../../lsm/testing/prng.ts';
import { agentColumns, APPROVAL_INBOX_SPEC, APPROVAL_INBOX_TABLE, decisionColumns, DECISION_LOG_SPEC, DECISION_LOG_TABLE, type InboxRow } from '../../inbox/index.ts';

export { mulberry32 };

export function tempDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `tilstand-sync-${tag}-`));
}

/** created_at_ms of proposal p-0 in writeInbox. */
const INBOX_T0_MS = Date.UTC(2026, 2, 5, 9, 0, 0);

export interface SiteFixture {
  data: string;
  site: string;
  catalog: Catalog;
  table(name: string): Table;
}

/** A site with stock (PK), approval_inbox and decision_log (the inbox's own schemas) and contracts/. */
export function makeSite(site: string, o: { rows?: number; data?: string } = {}): SiteFixture {
  const data = o.data ?? tempDir('site');
  const catalog = new Catalog(join(data, 'warehouse'));
  const db = `site_${site}`;
  catalog.createDatabase(db, true);
  const retain = { 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '3', 'snapshot.time-retained': '1 ms' };
  catalog.createTable({ database: db, table: 'stock' }, {
    fields: [
      { name: 'item', type: 'STRING' },
      { name: 'location', type: 'STRING' },
      { name: 'qty', type: 'INT' },
      { name: 'note', type: 'STRING' },
    ],
    primaryKeys: ['item', 'location'],
    options: { bucket: '2', ...retain },
  });
  // The inbox tables as a site makes them (core/inbox), so HQ's commands read the real columns.
  catalog.createTable({ database: db, table: APPROVAL_INBOX_TABLE }, { ...APPROVAL_INBOX_SPEC, options: { ...APPROVAL_INBOX_SPEC.options, ...retain } });
  catalog.createTable({ database: db, table: DECISION_LOG_TABLE }, { ...DECISION_LOG_SPEC, options: { ...DECISION_LOG_SPEC.options, ...retain } });
  mkdirSync(join(data, 'contracts', 'inventory.stock'), { recursive: true });
  writeFileSync(join(data, 'contracts', 'inventory.stock', 'v1.json'), JSON.stringify({ name: 'inventory.stock', version: 1 }));
  writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site, hq: { target: null } }));
  const fx: SiteFixture = { data, site, catalog, table: (name) => catalog.getTable({ database: db, table: name }) };
  writeStock(fx, 0, o.rows ?? 2000, 1);
  writeInbox(fx, 0, 5);
  return fx;
}

/** Rows [from, to) of stock, committed once with high-water marks for inventory/stock. */
export function writeStock(fx: SiteFixture, from: number, to: number, hwm: number): number {
  const w = fx.table('stock').newWriter();
  try {
    for (let i = from; i < to; i++) w.write([`item-${i % 997}`, `loc-${Math.floor(i / 997)}`, i, `note ${i} ${'x'.repeat(i % 40)}`], RowKind.INSERT);
    return w.commit({ 'tilstand.hwm.inventory/stock': String(hwm), 'tilstand.hwm.commerce/reservations': String(hwm * 10) }).snapshotId!;
  } finally {
    w.close();
  }
}

/**
 * Proposals p-from … p-(to−1) in approval_inbox (created one ms apart, so p-(to−1) is the newest),
 * the odd ones approved by lead-anna, with their decision_log entries; the inbox commit carries
 * the high-water mark agents/proposals = to.
 */
export function writeInbox(fx: SiteFixture, from: number, to: number): void {
  const w = fx.table(APPROVAL_INBOX_TABLE).newWriter();
  const d = fx.table(DECISION_LOG_TABLE).newWriter();
  try {
    for (let i = from; i < to; i++) {
      const atMs = INBOX_T0_MS + i;
      // p-0 has an action and an explanation longer than a line of `hq proposals --format text` shows.
      const params: Record<string, string | number> = i === 0 ? { item: 'item-0', to_location: 'A-01', note: 'count again before moving the pallet', qty: 12 } : { item: `item-${i}` };
      const explanation = i === 0 ? `move ${i}: ${'the pallet is in the wrong aisle and blocks the pick face; '.repeat(2)}` : `move ${i}`;
      const input = { situationKey: `move|move_item|item=item-${i}`, ruleId: 'move', ruleVersion: '1', action: 'move_item', module: 'inventory', params, risk: 'low' as const, riskReason: 'test', explanation, evidence: [], runId: `run-${i}` };
      let r: InboxRow = { ...agentColumns(`p-${i}`, input, atMs, 'open', null, atMs), agent_seq: 1n };
      if (i % 2 === 1) {
        r = { ...r, ...decisionColumns({ kind: 'approved', by: 'lead-anna', role: 'shift_lead', atMs: atMs + 1, comment: null, snapshots: { seen: {}, checked: {} }, reason: null }), decision_seq: 1n };
        d.writeRecord({ entry_id: BigInt(i), at_ms: BigInt(atMs + 1), proposal_id: `p-${i}`, event: 'approved', actor: 'lead-anna', detail: '{}' });
      }
      w.writeRecord(r);
    }
    w.commit({ 'tilstand.hwm.agents/proposals': String(to) });
    d.commit();
  } finally {
    w.close();
    d.close();
  }
}

export const scanSorted = (t: Table, at: Parameters<Table['scanRows']>[0] = {}): string[] => t.scanRows(at).map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).sort();

// ---------------------------------------------------------------------------------------------
// paimon-check

/** The independent check of a table directory (../shared/tools/paimon-check), as core/lsm's tests run it. */
export { paimonCheck, paimonCheckAvailable } from '../../lsm/testing/shared.ts';

// ---------------------------------------------------------------------------------------------
// s3rver on loopback, counting completed PUTs per key.

export interface S3Fixture {
  port: number;
  endpoint: string;
  bucket: string;
  /** Completed PUTs per key (s3rver's ObjectCreated:Put events). */
  puts: Map<string, number>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'hq'): Promise<S3Fixture> {
  const directory = tempDir('s3rver');
  const srv = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] } as ConstructorParameters<typeof S3rver>[0]);
  wholePuts(srv);
  const addr = (await srv.run()) as net.AddressInfo;
  const puts = new Map<string, number>();
  srv.on('event', (e: { Records: { eventName: string; s3: { object: { key: string } } }[] }) => {
    for (const r of e.Records) {
      if (!r.eventName.startsWith('ObjectCreated')) continue;
      const key = decodeURIComponent(r.s3.object.key);
      puts.set(key, (puts.get(key) ?? 0) + 1);
    }
  });
  return {
    port: addr.port,
    endpoint: `http://127.0.0.1:${addr.port}`,
    bucket,
    puts,
    close: async () => {
      await srv.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

interface S3rverObject {
  bucket: string;
  key: string;
  content: IncomingMessage | Buffer;
  metadata: Record<string, string>;
}

interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}

let partFiles = 0;

/**
 * s3rver writes a PUT's body straight over the stored object as it arrives and never checks
 * Content-MD5, so a PUT whose connection breaks mid-body leaves a torn object that every later GET
 * returns. S3 (and MinIO, Ceph, Garage) never shows one: a PUT becomes visible whole when it
 * completes or not at all, which the S3 target relies on (targets/s3.ts) — with s3rver's
 * behaviour a cut PUT of HQ's sender marker read as "not a marker" and stopped sending for good.
 * The fixture's store takes the body whole first (a body shorter than its Content-Length, or
 * aborted, stores nothing), answers BadDigest when Content-MD5 does not match, and renames the
 * object into place after its metadata.
 */
function wholePuts(srv: S3rver): void {
  const store = (srv as unknown as { store: S3rverStore }).store;
  const S3Error = createRequire(import.meta.url)('s3rver/lib/models/error.js') as new (code: string, message: string) => Error;
  store.putObject = async (object) => {
    const body = Buffer.isBuffer(object.content) ? object.content : await wholeBody(object.content);
    const md5 = createHash('md5').update(body).digest();
    const sent = Buffer.isBuffer(object.content) ? undefined : object.content.headers['content-md5'];
    if (typeof sent === 'string' && sent !== md5.toString('base64')) throw new S3Error('BadDigest', 'The Content-MD5 you specified did not match what we received.');
    const path = store.getResourcePath(object.bucket, object.key, 'object');
    const part = `${path}.part-${process.pid}-${++partFiles}`;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(part, body);
    try {
      await store.putMetadata(object.bucket, object.key, object.metadata, md5.toString('hex'));
      await rename(part, path);
    } catch (e) {
      await unlink(part).catch(() => {});
      throw e;
    }
    return { size: body.length, md5: md5.toString('hex') };
  };
}

/** The request's body; rejects when the connection ends before Content-Length bytes arrived. */
function wholeBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const expected = Number(req.headers['content-length'] ?? NaN);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('the PUT connection ended mid-body')));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (Number.isFinite(expected) && body.length !== expected) reject(new Error(`the PUT body has ${body.length} of ${expected} bytes`));
      else resolve(body);
    });
    req.on('close', () => {
      if (!req.complete) reject(new Error('the PUT connection ended mid-body'));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// A TCP proxy that cuts some connections after a seeded number of client→server bytes.

export interface DropProxy {
  port: number;
  endpoint: string;
  drops: number;
  connections: number;
  close(): Promise<void>;
}

export async function startDropProxy(upstreamPort: number, random: () => number, o: { maxCutBytes?: number } = {}): Promise<DropProxy> {
  const sockets = new Set<net.Socket>();
  const p: DropProxy = { port: 0, endpoint: '', drops: 0, connections: 0, close: async () => {} };
  // Connections are kept alive (one may carry the whole sync), so cuts are drawn over the byte
  // stream of all connections: after each cut the next one is drawn — in the request direction
  // (mid-upload) or, sometimes, in the response direction (after the server has the request).
  let onResponse = false;
  let left = 0;
  const draw = () => {
    onResponse = random() < 0.3;
    left = Math.floor(random() * (onResponse ? 3000 : (o.maxCutBytes ?? 200_000))) + 1;
  };
  draw();
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    p.connections++;
    sockets.add(client);
    sockets.add(upstream);
    const kill = () => {
      p.drops++;
      client.destroy();
      upstream.destroy();
      draw();
    };
    const pass = (response: boolean, b: Buffer, to: net.Socket) => {
      if (response === onResponse) {
        left -= b.length;
        if (left <= 0) return kill();
      }
      to.write(b);
    };
    client.on('data', (b: Buffer) => pass(false, b, upstream));
    upstream.on('data', (b: Buffer) => pass(true, b, client));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  p.port = (server.address() as net.AddressInfo).port;
  p.endpoint = `http://127.0.0.1:${p.port}`;
  p.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return p;
}
