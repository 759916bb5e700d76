// Two data directories sending as one site to one HQ (a replaced PC back online after its
// successor was restored, a copied data directory): the sender marker at HQ
// (`site_<id>.db/.tilstand/sender.json`, sender.ts) lets one of them send and stops the other
// before it writes or removes anything there.

import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runSync } from './cli/sync.ts';
import { SyncEngine, statusOf } from './engine.ts';
import { SyncError } from './errors.ts';
import { senderMarkerKey, sitePrefix } from './names.ts';
import { openOutboxDb, Outbox } from './outbox.ts';
import { restoreSite } from './restore.ts';
import { MARKER_SINCE, takeOverFor } from './sender.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { S3Target } from './targets/s3.ts';
import type { ObjectInfo, PutBody, PutMeta, SyncTarget } from './targets/target.ts';
import { makeSite, startS3, tempDir, writeStock, type S3Fixture, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
let s3: S3Fixture;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const SITE = 'twin';

function site(rows: number): SiteFixture {
  const fx = makeSite(SITE, { rows });
  cleanup.push(fx.data);
  return fx;
}

function hqDir(): string {
  const d = tempDir('hq');
  cleanup.push(d);
  return d;
}

const dirTarget = (hq: string) => new DirectoryTarget(hq, { writePrefix: sitePrefix(SITE) });

function engine(data: string, target: SyncTarget, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}): SyncEngine {
  return new SyncEngine({ dataDir: data, site: SITE, target, retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null, ...extra });
}

/** Plans and runs until nothing is pending or the engine stops itself (bounded: 30 rounds). */
async function syncRounds(e: SyncEngine): Promise<void> {
  await e.enqueueSnapshotSync();
  for (let i = 0; i < 30 && e.status().pendingItems > 0; i++) {
    const r = await e.runOnce();
    if (r.done === 0 && r.failed === 0) break;
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** Every file under `dir` with its bytes (hex), for comparing HQ before and after. */
function contents(dir: string, base = dir): Record<string, string> {
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) Object.assign(out, contents(p, base));
    else out[p.slice(base.length + 1)] = readFileSync(p).toString('hex');
  }
  return out;
}

const stockSnapshots = (hq: string) => readdirSync(join(hq, sitePrefix(SITE), 'stock', 'snapshot')).filter((n) => n.startsWith('snapshot-')).sort();
const stockLatest = (hq: string) => readFileSync(join(hq, sitePrefix(SITE), 'stock', 'snapshot', 'LATEST'), 'utf8');
const marker = (hq: string) => JSON.parse(readFileSync(join(hq, senderMarkerKey(SITE)), 'utf8')) as { sender: string; by: string; sinceMs: number };
/** A restored data directory as a fixture (its tables are HQ's copy). */
function restoredSite(data: string): SiteFixture {
  const catalog = new Catalog(join(data, 'warehouse'));
  return { data, site: SITE, catalog, table: (name) => catalog.getTable({ database: `site_${SITE}`, table: name }) };
}

const senderOf = (data: string) => {
  const db = openOutboxDb(join(data, 'site.db'), true);
  try {
    return new Outbox(db).getState('senderId');
  } finally {
    db.close();
  }
};

describe('two data directories sending as one site', () => {
  it('the second sender is stopped before it writes or removes anything at HQ; the first goes on', async () => {
    const hq = hqDir();
    const a = site(300);
    // B is another PC's state of the same site: one more commit, so its snapshot ids differ.
    const b = site(300);
    writeStock(b, 300, 400, 2);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    expect(ea.status().pendingItems).toBe(0);
    expect(marker(hq).sender).toBe(senderOf(a.data));
    expect(marker(hq).by).toBe('first send');
    const aSnapshot = stockSnapshots(hq);
    const before = contents(hq);

    const eb = engine(b.data, dirTarget(hq));
    await syncRounds(eb);
    // Without the marker B wrote its snapshot, hints and tags and its prune removed A's snapshot
    // JSON: HQ's latest flipped to B's state.
    expect(stockSnapshots(hq)).toEqual(aSnapshot);
    expect(contents(hq)).toEqual(before);
    const sb = eb.status();
    expect(sb.healthy).toBe(false);
    expect(sb.problems).toEqual(['refused']);
    expect(sb.lastError).toContain(`belongs to another sender: ${senderOf(a.data)}`);
    expect(sb.lastError).toContain('--take-over');
    expect(sb.pendingItems).toBeGreaterThan(0);
    // `sync status` reads the same from the outbox (a stopped site).
    await eb.close();
    const db = openOutboxDb(join(b.data, 'site.db'), true);
    try {
      expect(statusOf(new Outbox(db), Date.now(), 60_000).lastError).toContain('belongs to another sender');
    } finally {
      db.close();
    }

    // A goes on: its next commit reaches HQ, and its prune leaves one snapshot.
    const next = writeStock(a, 300, 350, 3);
    await syncRounds(ea);
    expect(ea.status().pendingItems).toBe(0);
    expect(stockSnapshots(hq)).toEqual([`snapshot-${next}`]);
    expect(stockLatest(hq)).toBe(String(next));
    await ea.close();
  });

  it('a restore adopts the marker: the old PC, back online, is the one that stops', async () => {
    const hq = hqDir();
    const old = site(300);
    const eo = engine(old.data, dirTarget(hq));
    await syncRounds(eo);
    await eo.close();
    const fresh = tempDir('restored');
    cleanup.push(fresh);
    const note = await restoreSite({ dataDir: fresh, target: dirTarget(hq), site: SITE });
    expect(note.sender).toEqual({ id: senderOf(fresh), adopted: true });
    expect(marker(hq)).toMatchObject({ sender: senderOf(fresh), by: 'restore' });

    // The old PC commits and comes back: refused, HQ untouched.
    writeStock(old, 300, 500, 9);
    writeStock(old, 500, 600, 10);
    const before = contents(hq);
    const eo2 = engine(old.data, dirTarget(hq));
    await syncRounds(eo2);
    expect(contents(hq)).toEqual(before);
    expect(eo2.status().lastError).toContain(`belongs to another sender: ${senderOf(fresh)}`);
    expect(eo2.status().lastError).toContain('(restore)');
    await eo2.close();

    // The successor sends: its next commit reaches HQ.
    const successor = restoredSite(fresh);
    const next = writeStock(successor, 0, 50, 11);
    const en = engine(fresh, dirTarget(hq));
    await syncRounds(en);
    expect(en.status()).toMatchObject({ pendingItems: 0, lastError: null, healthy: true });
    expect(stockSnapshots(hq)).toEqual([`snapshot-${next}`]);
    await en.close();
  });
});

/** A target that delegates, counts reads of the marker, and runs a hook once before a matching listing or head. */
class Hooked implements SyncTarget {
  markerGets = 0;
  hook: { op: 'list' | 'head'; match: RegExp; run: () => Promise<void> } | undefined;
  /** Marker reads answer "absent" until this sender writes its own (it read before the other wrote). */
  hideMarker = false;
  constructor(readonly inner: SyncTarget) {}
  get description() {
    return this.inner.description;
  }
  put(key: string, body: PutBody, meta: PutMeta) {
    return this.inner.put(key, body, meta);
  }
  putPointer(key: string, bytes: Uint8Array) {
    if (key === senderMarkerKey(SITE)) this.hideMarker = false;
    return this.inner.putPointer(key, bytes);
  }
  private async fire(op: 'list' | 'head', key: string): Promise<void> {
    const h = this.hook;
    if (h && h.op === op && h.match.test(key)) {
      this.hook = undefined;
      await h.run();
    }
  }
  async list(prefix: string): Promise<ObjectInfo[]> {
    await this.fire('list', prefix);
    return this.inner.list(prefix);
  }
  async get(key: string) {
    if (key === senderMarkerKey(SITE)) {
      this.markerGets++;
      if (this.hideMarker) {
        throw new SyncError('NotFound', `get ${key}: not found`);
      }
    }
    return this.inner.get(key);
  }
  async head(key: string) {
    await this.fire('head', key);
    return this.inner.head(key);
  }
  remove(key: string) {
    return this.inner.remove(key);
  }
  close() {
    return this.inner.close();
  }
}

describe('taking the prefix over', () => {
  it('`sync now --take-over` makes this directory the sender; the other stops; sync status says so; exit 3 while refused', async () => {
    const hq = hqDir();
    const a = site(300);
    const b = site(300);
    writeStock(b, 300, 400, 2);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    const now = (data: string, ...more: string[]) => runCli(runSync, ['now', '--data', data, '--hq', hq, '--json', ...more]);
    // B without --take-over: refused, exit 3 (conflict), the reason in lastError.
    const refused = await now(b.data);
    expect(refused.code, refused.err).toBe(3);
    expect(JSON.parse(refused.out)).toMatchObject({ healthy: false, lastError: expect.stringContaining(`belongs to another sender: ${senderOf(a.data)}`) });
    const st = await runCli(runSync, ['status', '--data', b.data]);
    expect(st.out).toMatch(/health: +STALLED/);
    expect(st.out).toContain('--take-over');
    // With it: B sends, HQ holds B's state.
    const taken = await now(b.data, '--take-over');
    expect(taken.code, taken.err + taken.out).toBe(0);
    expect(JSON.parse(taken.out)).toMatchObject({ healthy: true, lastError: null, pendingItems: 0 });
    expect(marker(hq)).toMatchObject({ sender: senderOf(b.data), by: 'take-over' });
    const bLatest = b.table('stock').latestSnapshot()!.id;
    expect(stockSnapshots(hq)).toEqual([`snapshot-${bLatest}`]);
    // A's next commit: refused, HQ untouched.
    writeStock(a, 300, 320, 3);
    const before = contents(hq);
    await syncRounds(ea);
    expect(contents(hq)).toEqual(before);
    expect(ea.refusedByHq).toBe(true);
    expect(ea.status().lastError).toContain(`belongs to another sender: ${senderOf(b.data)}`);
    expect(ea.status().lastError).toContain('(take-over)');
    await ea.close();
    // And back: A takes over; its refusal is cleared and its state goes to HQ.
    const back = await now(a.data, '--take-over');
    expect(back.code, back.err + back.out).toBe(0);
    expect(JSON.parse(back.out)).toMatchObject({ healthy: true, lastError: null, pendingItems: 0 });
    expect(stockSnapshots(hq)).toEqual([`snapshot-${a.table('stock').latestSnapshot()!.id}`]);
  });

  it('a prefix without a marker (synced before markers) is adopted silently by the first sender to come', async () => {
    const hq = hqDir();
    const a = site(300);
    const first = engine(a.data, dirTarget(hq));
    await syncRounds(first);
    await first.close();
    // What a version before markers left: HQ without one, and an outbox that never knew one (an
    // outbox that had one finds HQ's copy gone instead: marker-gone.test.ts).
    rmSync(join(hq, senderMarkerKey(SITE)));
    const db = openOutboxDb(join(a.data, 'site.db'));
    try {
      new Outbox(db).setState(MARKER_SINCE, null);
    } finally {
      db.close();
    }
    const next = writeStock(a, 300, 330, 2);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    expect(ea.status()).toMatchObject({ pendingItems: 0, lastError: null, healthy: true });
    expect(marker(hq)).toMatchObject({ sender: senderOf(a.data), by: 'first send' });
    expect(stockSnapshots(hq)).toEqual([`snapshot-${next}`]);
    await ea.close();
  });
});

describe('taking back a prefix another sender wrote to', () => {
  /** A syncs, then B takes the prefix over and ships its own state: HQ's stock is B's. */
  async function bOverA() {
    const hq = hqDir();
    const a = site(300);
    const b = site(300);
    writeStock(b, 300, 400, 2);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    const eb = engine(b.data, dirTarget(hq), { takeOver: true });
    await syncRounds(eb);
    await eb.close();
    expectStockOf(hq, b);
    return { hq, a, ea };
  }
  const aLatest = (a: SiteFixture) => `snapshot-${a.table('stock').latestSnapshot()!.id}`;

  it('`takeOver` drops what the outbox knew HQ held: with no new commit, its state goes back', async () => {
    const { hq, a, ea } = await bOverA();
    await ea.close();
    const logs: string[] = [];
    const again = engine(a.data, dirTarget(hq), { takeOver: true, log: (l) => logs.push(l) });
    await syncRounds(again);
    expect(again.status()).toMatchObject({ pendingItems: 0, lastError: null, healthy: true });
    // Its outbox said A's snapshot was done at HQ: without dropping it, nothing was planned and
    // HQ kept B's state.
    expect(stockSnapshots(hq)).toEqual([aLatest(a)]);
    expect(logs.join('\n')).toMatch(/took HQ's prefix over from sender .*record of what HQ holds dropped/);
    await again.close();
  });

  it('a take-over written from outside (the command, beside a running site) is noticed by the engine, which plans again', async () => {
    const { hq, a, ea } = await bOverA();
    // The running site's engine is refused…
    await syncRounds(ea);
    expect(ea.refusedByHq).toBe(true);
    // …until `sync now --take-over` writes the marker with its id, and asks it to sync.
    const db = openOutboxDb(join(a.data, 'site.db'), true);
    try {
      await takeOverFor(new Outbox(db), a.data, SITE, dirTarget(hq), Date.now());
    } finally {
      db.close();
    }
    const r = await ea.syncNow(10);
    expect(r.status).toMatchObject({ pendingItems: 0, lastError: null, healthy: true });
    expect(stockSnapshots(hq)).toEqual([aLatest(a)]);
    expect(stockLatest(hq)).toBe(aLatest(a).slice('snapshot-'.length));
    await ea.close();
  });
});

describe('removals of run tags HQ still owes, across a take-over', () => {
  const hqTags = (hq: string) => readdirSync(join(hq, sitePrefix(SITE), 'stock', 'tag')).sort();

  it('survive it: a run tag the site expired leaves HQ after the prefix was taken back, whether its removal was planned or not yet', async () => {
    const hq = hqDir();
    const a = site(300);
    const b = site(300);
    const keepMs = 600_000;
    let now = Date.now();
    const clock = () => now;
    const stock = a.table('stock');
    for (const t of ['agent-1', 'agent-2', 'agent-3']) stock.createTag(t);
    const ea = engine(a.data, dirTarget(hq), { clock, outboxKeepMs: keepMs });
    await syncRounds(ea);
    expect(hqTags(hq)).toEqual(['tag-agent-1', 'tag-agent-2', 'tag-agent-3']);
    // agent-1 left the site long ago: its removal is planned, not yet run (B takes the prefix over first).
    stock.deleteTag('agent-1');
    now += keepMs * 2;
    await ea.enqueueSnapshotSync();
    expect(ea.outbox.rows().filter((r) => r.state === 'pending' && r.op === 'remove').map((r) => r.unit)).toEqual(['untag:stock:agent-1']);
    // agent-2 left it just now: its unit is still whole, the removal not yet planned.
    stock.deleteTag('agent-2');
    await ea.close();
    const eb = engine(b.data, dirTarget(hq), { takeOver: true });
    await syncRounds(eb);
    await eb.close();
    // A takes the prefix back: the outbox drops what it knew HQ held, but not what HQ still owes it.
    const back = engine(a.data, dirTarget(hq), { clock, outboxKeepMs: keepMs, takeOver: true });
    await syncRounds(back);
    now += keepMs * 2;
    await syncRounds(back);
    expect(back.status()).toMatchObject({ pendingItems: 0, lastError: null, healthy: true });
    // Was: both stayed at HQ for good (the take-over forgot the pending removal and the unit that would have planned one).
    expect(hqTags(hq)).toEqual(['tag-agent-3']);
    await back.close();
  });
});

describe('a marker that is not one', () => {
  it('is a refusal naming the file, not taken for an absent marker; a take-over rewrites it', async () => {
    const hq = hqDir();
    const a = site(200);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    writeFileSync(join(hq, senderMarkerKey(SITE)), 'not json {');
    writeStock(a, 200, 220, 2);
    const before = contents(hq);
    await syncRounds(ea);
    expect(contents(hq)).toEqual(before);
    expect(ea.status()).toMatchObject({ healthy: false, lastError: expect.stringContaining(`HQ's sender marker ${senderMarkerKey(SITE)} is not one`) });
    await ea.close();
    const taken = engine(a.data, dirTarget(hq), { takeOver: true });
    await syncRounds(taken);
    expect(taken.status()).toMatchObject({ pendingItems: 0, lastError: null, healthy: true });
    expect(marker(hq)).toMatchObject({ sender: senderOf(a.data), by: 'take-over' });
    await taken.close();
  });
});

describe('a copied data directory', () => {
  it('gets a new sender id (another path or machine) and is refused until taken over', async () => {
    const hq = hqDir();
    const a = site(300);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    await ea.close();
    const copy = tempDir('copy');
    cleanup.push(copy);
    cpSync(a.data, copy, { recursive: true });
    const logs: string[] = [];
    const ec = engine(copy, dirTarget(hq), { log: (l) => logs.push(l) });
    expect(ec.sender).not.toBe(senderOf(a.data));
    expect(logs.join('\n')).toContain('a copied or moved data directory');
    const fx: SiteFixture = { ...restoredSite(copy) };
    writeStock(fx, 300, 400, 5);
    const before = contents(hq);
    await syncRounds(ec);
    expect(contents(hq)).toEqual(before);
    expect(ec.status().lastError).toContain(`belongs to another sender: ${senderOf(a.data)}`);
    await ec.close();
    // The original keeps its id (same machine, same path).
    const ea2 = engine(a.data, dirTarget(hq));
    expect(ea2.sender).toBe(senderOf(a.data));
    await ea2.close();
  });
});

/** HQ's stock snapshot JSON and hints are B's, byte for byte. */
function expectStockOf(hq: string, b: SiteFixture): void {
  const latest = b.table('stock').latestSnapshot()!.id;
  const snap = (root: string) => readFileSync(join(root, sitePrefix(SITE), 'stock', 'snapshot', `snapshot-${latest}`), 'utf8');
  expect(stockSnapshots(hq)).toEqual([`snapshot-${latest}`]);
  expect(snap(hq)).toBe(snap(join(b.data, 'warehouse')));
  expect(stockLatest(hq)).toBe(String(latest));
}

describe('another sender taking the prefix while this one is in the middle of a round', () => {
  it('two first senders: the loser notices at its prune and removes nothing the winner wrote', async () => {
    const hq = hqDir();
    const a = site(300);
    const b = site(300);
    writeStock(b, 300, 400, 2);
    const ta = new Hooked(dirTarget(hq));
    const tb = new Hooked(dirTarget(hq));
    const ea = engine(a.data, ta);
    const eb = engine(b.data, tb);
    // A takes the empty prefix and ships; just before A's prune of stock lists HQ, B — which read
    // the marker before A wrote it — writes its own and ships everything.
    let bRan = false;
    ta.hook = {
      op: 'list',
      match: /\/stock\/snapshot\/$/,
      run: async () => {
        tb.hideMarker = true;
        await syncRounds(eb);
        bRan = true;
      },
    };
    await syncRounds(ea);
    expect(bRan).toBe(true);
    expect(marker(hq).sender).toBe(senderOf(b.data));
    expect(eb.status()).toMatchObject({ pendingItems: 0, lastError: null });
    // A's prune, checking the marker after its listing, left B's stock snapshot (another id than A's).
    expectStockOf(hq, b);
    expect(ea.refusedByHq).toBe(true);
    expect(ea.status().lastError).toContain(`belongs to another sender: ${senderOf(b.data)}`);
    await ea.close();
    await eb.close();
  });

  it('a take-over between two steps: the old sender writes no pointer after it', async () => {
    const hq = hqDir();
    const a = site(300);
    const b = site(300);
    writeStock(b, 300, 400, 2);
    const ta = new Hooked(dirTarget(hq));
    const ea = engine(a.data, ta);
    // Just before A's stock snapshot pointer step (its head; armed after planning, which heads
    // that key too), B takes over and ships.
    const eb = engine(b.data, dirTarget(hq), { takeOver: true });
    await ea.enqueueSnapshotSync();
    let bRan = false;
    ta.hook = {
      op: 'head',
      match: /\/stock\/snapshot\/snapshot-\d+$/,
      run: async () => {
        await syncRounds(eb);
        bRan = true;
      },
    };
    for (let i = 0; i < 30 && ea.status().pendingItems > 0 && !ea.refusedByHq; i++) await ea.runOnce();
    expect(bRan).toBe(true);
    expect(marker(hq)).toMatchObject({ sender: senderOf(b.data), by: 'take-over' });
    // A's stock pointer, hints and prune did not follow: HQ's stock is B's.
    expectStockOf(hq, b);
    expect(ea.refusedByHq).toBe(true);
    await ea.close();
    await eb.close();
  });
});

describe('the loop while refused', () => {
  it('asks HQ once per planning interval, not at every 50 ms wake-up', async () => {
    const hq = hqDir();
    const a = site(200);
    const b = site(200);
    writeStock(b, 200, 300, 2);
    const ea = engine(a.data, dirTarget(hq));
    await syncRounds(ea);
    await ea.close();
    const tb = new Hooked(dirTarget(hq));
    const eb = engine(b.data, tb);
    eb.start(400);
    await new Promise((r) => setTimeout(r, 1000));
    await eb.stop();
    expect(eb.refusedByHq).toBe(true);
    // Three plans in a second, each reading it at planning and before its round's first step;
    // waking every 50 ms for the steps still due read it ~20 times.
    expect(tb.markerGets).toBeGreaterThanOrEqual(2);
    expect(tb.markerGets).toBeLessThanOrEqual(8);
    await eb.close();
  });
});

describe('over S3', () => {
  it('the second sender is refused and HQ keeps every object as the first left it', async () => {
    const root = `twin-${Date.now()}/`;
    const target = () => new S3Target({ bucket: s3.bucket, root, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: sitePrefix(SITE) });
    const a = site(200);
    const b = site(200);
    writeStock(b, 200, 300, 2);
    const ta = target();
    const ea = engine(a.data, ta);
    await syncRounds(ea);
    expect(ea.status().pendingItems).toBe(0);
    const reader = new S3Target({ bucket: s3.bucket, root, endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
    const state = async () => Promise.all((await reader.list(sitePrefix(SITE))).map(async (o) => [o.key, (await reader.head(o.key))?.md5]));
    const before = await state();
    expect(before.map(([k]) => k)).toContain(senderMarkerKey(SITE));
    const tb = target();
    const eb = engine(b.data, tb);
    await syncRounds(eb);
    expect(await state()).toEqual(before);
    expect(eb.status().lastError).toContain(`belongs to another sender: ${ea.sender}`);
    // A restore from S3 adopts it; A then stops.
    const fresh = tempDir('restored-s3');
    cleanup.push(fresh);
    const note = await restoreSite({ dataDir: fresh, target: target(), site: SITE });
    expect(note.sender?.adopted).toBe(true);
    writeStock(a, 200, 210, 3);
    const afterRestore = await state();
    await syncRounds(ea);
    expect(await state()).toEqual(afterRestore);
    expect(ea.status().lastError).toContain(`belongs to another sender: ${note.sender!.id}`);
    for (const e of [ea, eb]) await e.close();
    for (const t of [ta, tb, reader]) await t.close();
  });
});


describe('a marker write whose answer the line lost', () => {
  it('is not taken for a take-over from outside: the steps and the record of what HQ holds stay', async () => {
    const hq = hqDir();
    const a = site(200);
    const inner = dirTarget(hq);
    let lost = 0;
    // The marker lands at HQ, and the answer never comes back (a connection cut after the request).
    const target: SyncTarget = Object.assign(Object.create(inner) as SyncTarget, {
      async putPointer(key: string, bytes: Buffer): Promise<void> {
        await inner.putPointer(key, bytes);
        if (key === senderMarkerKey(SITE) && lost++ === 0) throw new SyncError('Transport', 'connection reset after the request was sent');
      },
    });
    const logs: string[] = [];
    const e = engine(a.data, target, { log: (l) => logs.push(l) });
    await e.enqueueSnapshotSync();
    // runOnce alone, as a caller that does not plan again: had the steps been dropped, nothing
    // would be pending and HQ would lack the table.
    for (let i = 0; i < 30 && e.status().pendingItems > 0; i++) {
      await e.runOnce();
      await new Promise((res) => setTimeout(res, 2));
    }
    expect(lost).toBe(1);
    expect(logs.join('\n')).not.toContain('planning asks HQ again');
    expect(e.status().pendingItems).toBe(0);
    expect(stockSnapshots(hq).length).toBe(1);
    expect(marker(hq).sender).toBe(senderOf(a.data));
    await e.close();
  });
});
