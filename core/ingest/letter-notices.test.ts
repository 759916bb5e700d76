// A module is told of its own dead letters: the Ingestor's listener (after dead_letters' commit),
// LetterNotices' bound, and the whole path on a real EmbeddedBroker on 127.0.0.1 (port 0) to the
// module's ModuleClient; the broker's ACL keeps each module's notices its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { EmbeddedBroker, type Principal } from './broker.ts';
import { ContractRegistry } from './contracts.ts';
import { DEAD_LETTERS_TABLE_NAME, deadLettersAt, type DeadLetter } from './dead-letters.ts';
import { parseJsonSafely } from './envelope.ts';
import { Ingestor } from './ingestor.ts';
import { Journal } from './journal.ts';
import { checkLetterNotice, LetterNotices, lettersTopic, type DeadLetterNotice, type LetterNotice, type LetterSummaryNotice } from './letter-notices.ts';
import { ModuleClient } from './module-client/index.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES } from './seed-tables.ts';

const SITE = 's1';
const DB = 'site_s1';
const STOCK = { name: 'inventory.stock', version: 1 };
/** An inventory.stock event its contract refuses (qty is an INT): a contract_violation with its seq. */
const BAD_ROW = { item: 'A-1', location: 'L1', qty: 'three' };

let dir: string;
let journal: Journal;
let catalog: Catalog;
let ingestor: Ingestor;
const warnings: string[] = [];

function openIngestor(): Ingestor {
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  catalog = new Catalog(join(dir, 'warehouse'));
  return Ingestor.open({ site: SITE, catalog, database: DB, journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [], onWarning: (m) => warnings.push(m) });
}

/** Polls until `pred` holds; fails after `ms` (bounded). */
async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The letter as a reader of another catalog on the same directory sees it: what is on disk. */
function committedLetter(position: bigint): DeadLetter | undefined {
  const table = new Catalog(join(dir, 'warehouse')).getTable({ database: DB, table: DEAD_LETTERS_TABLE_NAME });
  return deadLettersAt(table, [position])[0];
}

const badEvent = (seq: number) =>
  JSON.stringify({ op: 'c', before: null, after: BAD_ROW, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: 1_764_493_200_000, contract: STOCK });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-letter-notices-'));
  journal = Journal.open(dir);
  warnings.length = 0;
  ingestor = openIngestor();
});

afterEach(() => {
  ingestor.close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Ingestor.setLetterListener', () => {
  it("hands on new letters only once dead_letters' commit holds them, each once, the open ones only", async () => {
    const told: { letters: DeadLetter[]; onDisk: (DeadLetter | undefined)[] }[] = [];
    ingestor.setLetterListener((letters) => told.push({ letters: [...letters], onDisk: letters.map((d) => committedLetter(d.position)) }));
    const p1 = await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from(badEvent(1)));
    const p2 = await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from('not json'));
    const p3 = await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from(badEvent(2)));
    expect(ingestor.listDeadLetters().map((d) => d.position)).toEqual([p1, p2, p3]);
    expect(told).toEqual([]); // written, not committed: a crash now would lose them
    // Dismissed before the commit: closed, so not announced.
    await ingestor.dismissDeadLetters([p3], 'lena', 'a test message');
    ingestor.commitAll();
    expect(told).toHaveLength(1);
    expect(told[0]!.letters.map((d) => [d.position, d.reason, d.seq])).toEqual([
      [p1, 'contract_violation', 1],
      [p2, 'bad_json', null],
    ]);
    // Each was on disk when the listener heard of it.
    expect(told[0]!.onDisk.map((d) => d?.status)).toEqual(['open', 'open']);
    // A replay that fails again rewrites the letter: not a new one.
    await ingestor.replayDeadLetters([p1]);
    ingestor.commitAll();
    expect(told).toHaveLength(1);
  });

  it("hands on a commit's letters in position order, also a held event's refused after a later position's", async () => {
    const told: bigint[][] = [];
    ingestor.setLetterListener((letters) => told.push(letters.map((d) => d.position)));
    // seq 2 comes first and waits in the reorder buffer for seq 1; both are refused when seq 1
    // comes, seq 1's (the later position) first.
    const p1 = await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from(badEvent(2)));
    const p2 = await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from(badEvent(1)));
    ingestor.commitAll();
    expect(told).toEqual([[p1, p2]]);
  });

  it('keeps a failing listener from failing the commit (a warning), and forgets what waits when it is removed', async () => {
    ingestor.setLetterListener(() => {
      throw new Error('broker gone');
    });
    await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from(badEvent(1)));
    ingestor.commitAll();
    expect(ingestor.failure()).toBeNull();
    expect(warnings.join('\n')).toMatch(/dead letter listener failed: broker gone/);
    const told: DeadLetter[] = [];
    ingestor.setLetterListener((l) => told.push(...l));
    await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, Buffer.from(badEvent(2)));
    ingestor.setLetterListener(undefined);
    ingestor.setLetterListener((l) => told.push(...l));
    ingestor.commitAll();
    expect(told).toEqual([]);
  });
});

describe('LetterNotices bound', () => {
  const letter = (position: number, module: string, reason: DeadLetter['reason'] = 'contract_violation'): DeadLetter => ({
    position: BigInt(position),
    status: 'open',
    reason,
    detail: `field qty: expected INT (${position})`,
    path: '$.after.qty',
    bindings: null,
    topic: `tilstand/${SITE}/events/${module}/stock`,
    module,
    stream: 'stock',
    seq: position,
    payload: Buffer.from('{}'),
    receivedAtMs: 1_764_493_200_000 + position,
    replayedAtMs: null,
    dismissed: null,
  });

  it('sends at most perSecond notices per module and window, the rest as one summary when the window is over', () => {
    let now = 0;
    const sent: { topic: string; notice: DeadLetterNotice }[] = [];
    const notices = new LetterNotices({ site: SITE, perSecond: 10, monotonicClock: () => now, clock: () => 1_764_500_000_000, publish: (topic, payload) => sent.push({ topic, notice: JSON.parse(payload) }) });
    // A flood of 5,000 letters of inventory in one window, and 3 of operations among them.
    const flood: DeadLetter[] = [];
    for (let i = 1; i <= 5_000; i++) flood.push(letter(i, 'inventory', i % 2 === 0 ? 'bad_json' : 'contract_violation'));
    flood.splice(100, 0, letter(9_001, 'operations'), letter(9_002, 'operations'), letter(9_003, 'operations'));
    notices.letters(flood.slice(0, 2_000));
    now = 999;
    notices.letters(flood.slice(2_000));
    notices.tick();
    const of = (m: string) => sent.filter((s) => s.topic === lettersTopic(SITE, m)).map((s) => s.notice);
    expect(of('inventory').map((n) => (n as LetterNotice).letter)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(of('operations')).toHaveLength(3);
    // The window is over: one summary of the rest, as the first notice of the next window.
    now = 1_000;
    notices.tick();
    const summary = of('inventory')[10] as LetterSummaryNotice;
    expect(of('inventory')).toHaveLength(11);
    expect(summary).toMatchObject({ kind: 'summary', module: 'inventory', more: 4_990, first_letter: '11', last_letter: '5000', reasons: { bad_json: 2_495, contract_violation: 2_495 } });
    expect(summary.since).toBe(new Date(1_764_493_200_011).toISOString());
    expect(summary.detail).toMatch(/^and 4,990 more dead letters since 2025-/);
    // The next window's letters: 9 more one by one (the summary took a slot), then counted again.
    notices.letters(Array.from({ length: 50 }, (_, i) => letter(6_000 + i, 'inventory')));
    expect(of('inventory')).toHaveLength(20);
    now = 2_000;
    notices.tick();
    expect(of('inventory')).toHaveLength(21);
    expect(of('inventory')[20]).toMatchObject({ kind: 'summary', more: 41, first_letter: '6009', last_letter: '6049' });
    // Quiet windows send nothing and are forgotten.
    now = 3_000;
    notices.tick();
    now = 4_000;
    notices.tick();
    expect(sent).toHaveLength(24);
    expect(notices.counts()).toEqual({ notices: 22, summaries: 2, unannounced: 0 });
  });

  it('names the lowest and highest letter, and the earliest and latest receive time, in a summary whatever order the letters came in', () => {
    const sent: DeadLetterNotice[] = [];
    let now = 0;
    const notices = new LetterNotices({ site: SITE, perSecond: 2, monotonicClock: () => now, publish: (_t, payload) => sent.push(JSON.parse(payload)) });
    // A commit's letters, then, in the same window, a held event's letter at a lower position
    // (released by a later commit).
    notices.letters([letter(20, 'inventory'), letter(21, 'inventory'), letter(22, 'inventory'), letter(23, 'inventory')]);
    notices.letters([letter(15, 'inventory')]);
    now = 1_000;
    notices.tick();
    expect(sent.at(-1)).toMatchObject({ kind: 'summary', more: 3, first_letter: '15', last_letter: '23', since: new Date(1_764_493_200_015).toISOString(), until: new Date(1_764_493_200_023).toISOString() });
    expect((sent.at(-1) as LetterSummaryNotice).detail).toMatch(/letters 15\.\.23;/);
  });

  it('sends a notice the module client can read when a detail or path is cut inside a character outside the BMP, or holds half of one', async () => {
    // A 😀 is two UTF-16 units: cut between them, the notice held a lone surrogate, JSON wrote it
    // as \ud83d, and the module client's safe JSON refused the whole notice (unsafe_json).
    const sent: string[] = [];
    const notices = new LetterNotices({ site: SITE, publish: (_t, payload) => sent.push(payload) });
    const emoji = '\u{1F600}';
    notices.letters([{ ...letter(1, 'inventory'), detail: `${'x'.repeat(998)}${emoji} and more`, path: `after.${'k'.repeat(192)}${emoji}x` }]);
    // A refused event's own text, cut by the envelope check to 30 units inside the emoji.
    ingestor.setLetterListener((letters) => notices.letters(letters));
    const bad = Buffer.from(`{"op":"${'o'.repeat(29)}${emoji}","before":null,"after":null,"source":{"module":"inventory","stream":"stock","seq":1},"ts_ms":1,"contract":${JSON.stringify(STOCK)}}`);
    await ingestor.accept(`tilstand/${SITE}/events/inventory/stock`, bad);
    ingestor.commitAll();
    expect(sent).toHaveLength(2);
    for (const payload of sent) {
      const parsed = parseJsonSafely(Buffer.from(payload));
      expect(parsed.ok ? 'ok' : parsed.detail).toBe('ok');
      const checked = checkLetterNotice((parsed as { value: Record<string, unknown> }).value, 'inventory');
      expect(checked.ok).toBe(true);
    }
    const [first, second] = sent.map((p) => JSON.parse(p) as LetterNotice);
    expect(first!.detail).toBe(`${'x'.repeat(998)}…`);
    expect(first!.path).toBe(`after.${'k'.repeat(192)}…`);
    expect(second!.reason).toBe('bad_envelope');
    expect(second!.detail).toContain(`"${'o'.repeat(29)}`);
  });

  it('announces nothing for a letter whose topic names no module of this site', () => {
    const sent: string[] = [];
    const notices = new LetterNotices({ site: SITE, publish: (t) => sent.push(t) });
    notices.letters([{ ...letter(1, 'inventory'), topic: 'tilstand/other/events/inventory/stock' }, { ...letter(2, 'inventory'), topic: 'somewhere/else', module: null }]);
    // A topic with more levels than a stream (the ACL lets its module publish there): its module is told.
    notices.letters([{ ...letter(3, 'inventory'), topic: `tilstand/${SITE}/events/inventory/stock/extra`, module: null, stream: null }]);
    expect(sent).toEqual([lettersTopic(SITE, 'inventory')]);
  });
});

describe('dead letter notices over the embedded broker', () => {
  const USERS = ['inventory', 'operations'];
  let broker: EmbeddedBroker;
  let url: string;
  let internal: MqttClient;
  let now = 0;
  let notices: LetterNotices;
  const modules: ModuleClient[] = [];
  const raw: MqttClient[] = [];

  beforeEach(async () => {
    broker = new EmbeddedBroker({
      site: SITE,
      credentials: {
        verify: async (u, pw): Promise<Principal | null> => (pw !== 'pw' ? null : u === 'tilstand' ? { name: u, kind: 'tilstand' } : USERS.includes(u) ? { name: u, kind: 'module', module: u } : null),
      },
      onEvent: (topic, payload) => ingestor.accept(topic, payload),
      host: '127.0.0.1',
      port: 0,
    });
    url = `mqtt://127.0.0.1:${await broker.listen()}`;
    internal = await mqtt.connectAsync(url, { username: 'tilstand', password: 'pw', clientId: 'tilstand-s1-site', reconnectPeriod: 0 });
    // The wiring core/site does (site.ts), on a clock the test moves.
    now = 0;
    notices = new LetterNotices({ site: SITE, monotonicClock: () => now, publish: (topic, payload) => internal.publish(topic, payload, { qos: 1 }) });
    ingestor.setLetterListener((letters) => notices.letters(letters));
  });

  afterEach(async () => {
    for (const m of modules.splice(0)) await m.close();
    for (const c of raw.splice(0)) await c.endAsync(true);
    await internal.endAsync(true);
    await broker.close();
  });

  const moduleClient = (module: string, onDeadLetter?: (n: DeadLetterNotice) => void, onWarning?: (m: string) => void): ModuleClient => {
    const c = new ModuleClient({ url, site: SITE, module, username: module, password: 'pw', outboxPath: join(dir, `${module}-outbox.db`), reconnect_period_ms: 100, onWarning: onWarning ?? (() => undefined), ...(onDeadLetter ? { onDeadLetter } : {}) });
    modules.push(c);
    return c;
  };

  it("tells the module of its refused event, with reason and seq, once the letter is in dead_letters", async () => {
    const got: { notice: DeadLetterNotice; onDisk: DeadLetter | undefined }[] = [];
    const inv = moduleClient('inventory', (notice) => got.push({ notice, onDisk: notice.kind === 'letter' ? committedLetter(BigInt(notice.letter)) : undefined }));
    await inv.connected();
    // Acknowledged (journaled), then refused by its contract.
    const { seq } = await inv.publish('stock', 'c', null, BAD_ROW, STOCK);
    await until(() => ingestor.listDeadLetters().length === 1, 'the letter');
    const [letter] = ingestor.listDeadLetters();
    // Not committed yet: nothing said (a crash now would lose the letter).
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([]);
    ingestor.commitAll();
    await until(() => got.length === 1, 'the notice');
    expect(got[0]!.notice).toEqual({
      kind: 'letter',
      module: 'inventory',
      stream: 'stock',
      seq,
      reason: 'contract_violation',
      detail: letter!.detail,
      path: letter!.path,
      letter: letter!.position.toString(),
      at: new Date(letter!.receivedAtMs).toISOString(),
    });
    expect(got[0]!.onDisk?.status).toBe('open');
  });

  it('bounds a flood: at most 10 notices in a window, then one summary of the rest', async () => {
    const got: DeadLetterNotice[] = [];
    const warned: string[] = [];
    const inv = moduleClient('inventory', (n) => got.push(n), (m) => warned.push(m));
    await inv.connected();
    const flood = 300;
    const publisher = await mqtt.connectAsync(url, { username: 'inventory', password: 'pw', clientId: 'inventory-flood', reconnectPeriod: 0 });
    raw.push(publisher);
    await Promise.all(Array.from({ length: flood }, (_, i) => publisher.publishAsync(`tilstand/${SITE}/events/inventory/stock`, badEvent(i + 1), { qos: 1 })));
    expect(ingestor.deadLetterCount()).toBe(flood);
    ingestor.commitAll();
    await until(() => got.length === 10, 'ten notices');
    now = 1_000;
    notices.tick();
    await until(() => got.length === 11, 'the summary');
    expect(got.slice(0, 10).map((n) => (n as LetterNotice).seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(got[10]).toMatchObject({ kind: 'summary', module: 'inventory', more: flood - 10, reasons: { contract_violation: flood - 10 } });
    // Nothing else comes: a last message on the same connection arrives after every notice.
    await internal.publishAsync(lettersTopic(SITE, 'inventory'), '{"kind":"last"}', { qos: 1 });
    await until(() => warned.some((m) => m.startsWith('dead letter notice refused')), 'the last message');
    expect(got).toHaveLength(11);
  });

  it("lets a module subscribe to its own letters topic and to no other module's", async () => {
    const warned: string[] = [];
    const inv = moduleClient('inventory', undefined, (m) => warned.push(m));
    await inv.connected();
    const ops = await mqtt.connectAsync(url, { username: 'operations', password: 'pw', clientId: 'ops-snoop', reconnectPeriod: 0 });
    raw.push(ops);
    const seen: string[] = [];
    ops.on('message', (t) => seen.push(t));
    for (const f of [lettersTopic(SITE, 'inventory'), `tilstand/${SITE}/letters/+`, `tilstand/${SITE}/letters/#`, `tilstand/${SITE}/#`]) {
      await expect(ops.subscribeAsync(f, { qos: 1 })).rejects.toThrow(/Subscribe error/);
    }
    expect((await ops.subscribeAsync(lettersTopic(SITE, 'operations'), { qos: 1 })).map((g) => g.qos)).toEqual([1]);
    // Nor may a module publish a notice, to another module or to itself.
    const forged = await mqtt.connectAsync(url, { username: 'operations', password: 'pw', clientId: 'ops-forge', reconnectPeriod: 0 });
    raw.push(forged);
    forged.on('error', () => undefined);
    const refused = new Promise<void>((r) => forged.once('close', () => r()));
    forged.publish(lettersTopic(SITE, 'inventory'), '{}', { qos: 1 });
    await refused;
    // inventory's letter reaches inventory (its warning, with no onDeadLetter) and not operations.
    await inv.publish('stock', 'c', null, BAD_ROW, STOCK);
    await until(() => ingestor.deadLetterCount() === 1, 'the letter');
    ingestor.commitAll();
    await until(() => warned.some((m) => m.startsWith('Tilstand refused an event of stock seq 1: contract_violation:')), 'the warning');
    await ops.publishAsync(`tilstand/${SITE}/acks/operations`, '{}', { qos: 1 }); // a round trip on ops' connection
    expect(seen).toEqual([]);
    expect(warned.filter((m) => m.startsWith('subscribe'))).toEqual([]);
  });
});
