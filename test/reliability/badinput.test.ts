// Bad-input suite: a seeded fuzzer sends generated payloads — malformed JSON, wrong types, missing
// and extra fields, payloads beyond the size limit, wrong topics, odd Unicode (lone surrogates,
// RTL marks, zero-width, emoji), __proto__/constructor keys, sequence numbers going backwards —
// most through the Ingestor's accept in process, a few thousand through the real embedded broker.
// Ingest never crashes, Object.prototype is never polluted, and accepted + dead-lettered +
// duplicates = sent. Publishes a module's ACL forbids are refused and counted. Unsafe names for
// tables, tags, sites and users are refused.
// Reproduce: TILSTAND_SEED_BADINPUT=<seed>.

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
import { UserStore } from '../../core/inbox/users.ts';
import { Catalog } from '../../core/lsm/index.ts';
import { siteIdProblem } from '../../core/site/config.ts';
import { choose, int, LONG, mulberry32, pick, removeTempDirs, suiteSeed, tempDir, until, writeSummary } from './lib/common.ts';
import { Publisher } from './lib/publisher.ts';
import { CHEAP_SCRYPT, envelope, rowsOf } from './lib/site-harness.ts';

const seed = suiteSeed('badinput');
const rand = mulberry32(seed);
const started = Date.now();
const t = { sent: 0, viaBroker: 0, accepted: 0, deadLettered: 0, duplicates: 0, aclRefused: 0, namesRefused: 0, byKind: {} as Record<string, number>, reasons: {} as Record<string, number> };
let passed = false;
afterAll(() => {
  writeSummary({ suite: 'badinput', proves: 'fuzzed payloads never crash ingest or pollute Object.prototype; accepted + dead-lettered + duplicates = sent; ACL-forbidden publishes refused; unsafe names refused', seed, trials: t.sent, faultsInjected: t.sent - t.accepted, inputsTried: t.sent + t.aclRefused + t.namesRefused, lost: 0, durationMs: Date.now() - started, details: { ...t, long: LONG }, passed });
  removeTempDirs();
});

const ODD = ['\u202e', '\u200b', '\ufeff', '😀', 'e\u0301', '\u0000', '\\', '"', 'ﷺ', '𝔘'];
const LONE = ['\ud800', '\udfff', 'a\udbff'];
const MODULES = [
  { module: 'inventory', stream: 'stock', contract: 'inventory.stock', after: (r: () => number) => ({ item: `I-${int(r, 0, 30)}`, location: 'L1', qty: int(r, -5, 500) }) },
  { module: 'operations', stream: 'jobs', contract: 'operations.jobs', after: (r: () => number) => ({ job_id: `J-${int(r, 0, 50)}`, status: 'released', capability: 'x', priority: 1 }) },
];

/** One generated (topic, payload, kind). Sequence numbers per stream are tracked for "backwards". */
function generate(r: () => number, seqs: Map<string, number>): { topic: string; payload: Buffer; kind: string } {
  const m = choose(r, MODULES);
  const topic = `tilstand/s1/events/${m.module}/${m.stream}`;
  const nextSeq = () => {
    const s = (seqs.get(m.module) ?? 0) + 1;
    seqs.set(m.module, s);
    return s;
  };
  // Payloads refused before the sequencer must not consume a seq (a gap would hold later events).
  const peekSeq = () => (seqs.get(m.module) ?? 0) + 1;
  const base = () => JSON.parse(envelope(m.module, m.stream, m.contract, nextSeq(), m.after(r))) as Record<string, any>;
  const early = () => JSON.parse(envelope(m.module, m.stream, m.contract, peekSeq(), m.after(r))) as Record<string, any>;
  let k = int(r, 0, 15);
  if (k === 5 && r() < 0.97) k = 0; // payloads over the limit are costly to journal: ~0.2 %
  switch (k) {
    case 0: return { topic, payload: Buffer.from(envelope(m.module, m.stream, m.contract, nextSeq(), m.after(r))), kind: 'valid' };
    case 1: { const s = JSON.stringify(early()); return { topic, payload: Buffer.from(s.slice(0, int(r, 0, s.length - 1))), kind: 'truncated' }; }
    case 2: { const e = early(); const f = choose(r, ['op', 'before', 'after', 'source', 'ts_ms', 'contract']); delete e[f]; return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'missing' }; }
    case 3: { const e = early(); e[choose(r, ['op', 'ts_ms', 'source', 'contract'])] = choose(r, [1.5, 'x', [], null, true, -1, 1e309]); return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'wrongtype' }; }
    case 4: { const e = base(); e.after.extra = 'x'; e.source.txId = 7; e.zzz = { a: 1 }; return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'extra' }; }
    case 5: return { topic, payload: Buffer.alloc(256 * 1024 + int(r, 1, 5000), 0x20), kind: 'huge' };
    case 6: return { topic: choose(r, ['tilstand/s1/events/inventory', 'tilstand/other/events/inventory/stock', 'tilstand/s1/events/inventory/stock/x', 'tilstand/s1/events/../stock', 'tilstand/s1/events/inventory/st ck']), payload: Buffer.from(JSON.stringify(early())), kind: 'wrongtopic' };
    case 7: { const e = base(); const key = Object.keys(e.after)[0]!; e.after[key] = `${e.after[key]}${choose(r, ODD)}${choose(r, ODD)}`; return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'unicode' }; }
    case 8: { const s = JSON.stringify(early()).replace('"after":{', `"after":{"${choose(r, ['__proto__', 'constructor', 'prototype'])}":{"polluted":true,"toString":1},`); return { topic, payload: Buffer.from(s), kind: 'proto' }; }
    case 9: { const e = early(); e.source.seq = Math.max(0, (seqs.get(m.module) ?? 1) - int(r, 1, 20)); return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'backwards' }; }
    case 10: return { topic, payload: Buffer.from([0xff, 0xfe, 0xc3, 0x28, ...Buffer.from('{"op":"c"}')]), kind: 'badutf8' };
    case 11: return { topic, payload: Buffer.from('['.repeat(int(r, 10, 5000))), kind: 'deep' };
    case 12: { const e = early(); e.source.module = 'commerce'; return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'mismatch' }; }
    case 13: { const e = base(); e.contract.version = int(r, 2, 9); return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'nocontract' }; }
    case 15: { const e = early(); e.after[Object.keys(e.after)[0]!] = `x${choose(r, LONE)}`; return { topic, payload: Buffer.from(JSON.stringify(e).replace(/\\ud[89ab][0-9a-f]{2}|\\ud[c-f][0-9a-f]{2}/gi, (x) => x)), kind: 'lonesurrogate' }; }
    default: { const e = base(); e.after[Object.keys(e.after)[0]!] = choose(r, [null, 12, {}, [], 'x'.repeat(5000)]); return { topic, payload: Buffer.from(JSON.stringify(e)), kind: 'badvalue' }; }
  }
}

function openIngest(dir: string) {
  const journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  const catalog = new Catalog(join(dir, 'warehouse'));
  const ingestor = Ingestor.open({ site: 's1', catalog, database: 'site_s1', journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: ['stock', 'work_queue', 'resources', 'dead_letters'].map((table) => ({ table, budgetMs: 60_000, decision: 'fuzz', confirmedBy: 'test' })), onWarning: () => undefined });
  return { journal, catalog, ingestor };
}

describe('bad input', () => {
  it('fuzzed payloads: no crash, no pollution, accepted + dead-lettered + duplicates = sent', async () => {
    const dir = tempDir('badinput');
    const { journal, catalog, ingestor } = openIngest(dir);
    const N = pick(100_000, 1_000_000);
    const BROKER_N = pick(3000, 30_000);
    const seqs = new Map<string, number>();
    const credentials: CredentialStore = { verify: async (u) => (MODULES.some((m) => m.module === u) ? { name: u, kind: 'module', module: u } : null) };
    // Any free port: 1883 is the appliance's own, and a site running on this PC holds it.
    const broker = new EmbeddedBroker({ site: 's1', credentials, onEvent: (topic, p) => ingestor.accept(topic, p), port: 0 });
    const port = await broker.listen();
    const pubs = new Map<string, Publisher>();
    for (const m of MODULES) pubs.set(m.module, await Publisher.connect({ url: `mqtt://127.0.0.1:${port}`, username: m.module, password: 'x', clientId: `fz-${m.module}`, reconnect: true }));
    let batch: Promise<unknown>[] = [];
    for (let i = 0; i < N + BROKER_N; i++) {
      const g = generate(rand, seqs);
      t.byKind[g.kind] = (t.byKind[g.kind] ?? 0) + 1;
      if (i >= N && g.topic.startsWith('tilstand/s1/events/') && g.payload.length < 200_000) {
        const module = g.topic.split('/')[3]!;
        const pub = pubs.get(module);
        if (pub && /^tilstand\/s1\/events\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+$/.test(g.topic)) {
          batch.push(pub.send(g.topic, g.payload).then((ok) => expect(ok).toBe(true)));
          t.viaBroker++;
          t.sent++;
          if (batch.length >= 200) (await Promise.all(batch), (batch = []));
          continue;
        }
      }
      batch.push(ingestor.accept(g.topic, g.payload));
      t.sent++;
      if (batch.length >= 500) {
        await Promise.all(batch);
        batch = [];
        if (i % 20_000 === 0) ingestor.tick(Date.now() + 120_000);
      }
    }
    await Promise.all(batch);
    // Let held out-of-order events time out (backwards seqs are duplicates; gaps never open here).
    let skew = 0;
    await until('reorder buffer empty', () => (ingestor.tick(Date.now() + (skew += 60_000)), ingestor.health().heldEvents ?? 0), (n) => n === 0, 20_000);
    ingestor.commitAll();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
    expect(ingestor.failure()).toBeNull();
    const m = ingestor.metrics();
    const metric = (name: string) => [...m.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].reduce((a, x) => a + Number(x[1]), 0);
    const dead = rowsOf(catalog.getTable({ database: 'site_s1', table: 'dead_letters' }));
    for (const d of dead) t.reasons[d.reason as string] = (t.reasons[d.reason as string] ?? 0) + 1;
    t.deadLettered = dead.length;
    t.duplicates = metric('tilstand_ingest_events_duplicate_total');
    t.accepted = metric('tilstand_ingest_events_applied_total');
    console.log(`[reliability badinput] metrics: ${m.split('\n').filter((l) => /_total|applied|duplic|dead/.test(l) && !l.startsWith('#')).join(' | ')}`);
    expect(journal.lastPosition()).toBe(BigInt(t.sent));
    expect(t.accepted + t.deadLettered + t.duplicates, `accepted ${t.accepted} + dead ${t.deadLettered} + duplicates ${t.duplicates} = sent ${t.sent}`).toBe(t.sent);
    // ACL: a module publishing another module's events or a command is refused and counted.
    const before = broker.metrics().publishRefused;
    for (const topic of ['tilstand/s1/events/operations/jobs', 'tilstand/s1/commands/inventory', 'tilstand/s1/resync/inventory']) {
      const p = await Publisher.connect({ url: `mqtt://127.0.0.1:${port}`, username: 'inventory', password: 'x', clientId: `acl-${topic}` });
      expect(await p.send(topic, '{}', 5000)).toBe(false);
      await p.close();
      t.aclRefused++;
    }
    expect(broker.metrics().publishRefused - before).toBe(3);
    for (const p of pubs.values()) await p.close();
    await broker.close();
    ingestor.close();
    journal.close();
    passed = true;
  }, pick(240_000, 3_600_000));

  it('names with .., slashes or control characters are refused for tables, tags, sites and users', async () => {
    const BAD = ['..', 'a/b', 'a\\b', '../x', 'x\u0000', 'x\n', 'x\u007f', '', 'a..b', '/abs'];
    const dir = tempDir('names');
    const catalog = new Catalog(dir);
    catalog.createDatabase('db');
    const table = catalog.createTable({ database: 'db', table: 'ok' }, { fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    const w = table.newWriter();
    w.write([1], 0 as never);
    w.commit();
    w.close();
    const db = new Database(join(dir, 'site.db'));
    const users = new UserStore(db, { scrypt: CHEAP_SCRYPT });
    for (const name of BAD) {
      expect(() => catalog.createTable({ database: 'db', table: name }, { fields: [{ name: 'k', type: 'INT' }], options: { bucket: '1' } }), `table ${JSON.stringify(name)}`).toThrow();
      expect(() => table.createTag(name), `tag ${JSON.stringify(name)}`).toThrow();
      expect(siteIdProblem(name), `site ${JSON.stringify(name)}`).toBeDefined();
      await expect(users.add({ name, role: 'viewer', pin: '1234' }), `user ${JSON.stringify(name)}`).rejects.toThrow();
      t.namesRefused += 4;
    }
    db.close();
  });
});
