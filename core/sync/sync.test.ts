// core/sync against a directory target (a mounted share): what travels, ordering, verification,
// priority, retention after site-side expiration, restore, scheduled tags, backoff, the outbox
// across restarts, and the loop. S3, isolation and cut transfers are in s3.test.ts.

import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Catalog, ForwardingFileIO, localFileIO, Table } from '../lsm/index.ts';
import { RACY_MS } from '../lsm/file-identity.ts';
import { RunCacheBudget } from '../lsm/run-cache.ts';
import { localWallClockMillis } from '../lsm/data-file.ts';
import { statusOf, SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { mirrorSite } from './hq/mirror.ts';
import { HqStore } from './hq/store.ts';
import { sitePrefix } from './names.ts';
import { openOutboxDb, Outbox } from './outbox.ts';
import { referencedFiles } from './plan.ts';
import { readRestoreNote, restoreSite, resyncRequests } from './restore.ts';
import { createScheduledTags, hourlyTagName } from './scheduled-tags.ts';
import { DirectoryTarget } from './targets/directory.ts';
import type { ObjectInfo, PutBody, PutMeta, SyncTarget } from './targets/target.ts';
import { makeSite, paimonCheck, paimonCheckAvailable, scanSorted, tempDir, writeInbox, writeStock, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function site(id = '7', rows = 2000): SiteFixture {
  const fx = makeSite(id, { rows });
  cleanup.push(fx.data);
  return fx;
}

function hqDir(): string {
  const d = tempDir('hq');
  cleanup.push(d);
  return d;
}

function engine(fx: SiteFixture, target: SyncTarget, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}): SyncEngine {
  return new SyncEngine({ dataDir: fx.data, site: fx.site, target, retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null, ...extra });
}

async function syncAll(e: SyncEngine, rounds = 50): Promise<void> {
  await e.enqueueSnapshotSync();
  for (let i = 0; i < rounds && e.status().pendingItems > 0; i++) {
    await e.runOnce();
    if (e.status().pendingItems > 0) await new Promise((r) => setTimeout(r, 10));
  }
  expect(e.status().pendingItems).toBe(0);
}

const hqTable = (hq: string, site: string, table: string) => join(hq, sitePrefix(site), table);
/** The JSON of stock's tag `name` at HQ and on the site. */
const stockTagAtHq = (hq: string, site: string, name: string) => readFileSync(join(hqTable(hq, site, 'stock'), 'tag', `tag-${name}`), 'utf8');
const stockTagOnSite = (fx: SiteFixture, name: string) => readFileSync(join(fx.data, 'warehouse', sitePrefix(fx.site), 'stock', 'tag', `tag-${name}`), 'utf8');

/** A site whose stock table has run tags agent-1 and agent-2 (a week's retention), an empty HQ, and readers of a stock tag's JSON on each side. */
function twoAgentTags(id: string, rows: number) {
  const fx = site(id, rows);
  const stock = fx.table('stock');
  const day = 24 * 3600_000;
  stock.createTag('agent-1', undefined, 7 * day);
  stock.createTag('agent-2', undefined, 7 * day);
  const hq = hqDir();
  return { fx, stock, day, hq, tagAtHq: (n: string) => stockTagAtHq(hq, fx.site, n), tagOnSite: (n: string) => stockTagOnSite(fx, n) };
}

/** Every file under a directory, relative. */
function filesUnder(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(join(dir, d.name), base) : [join(dir, d.name).slice(base.length + 1)]));
}

/** A target that delegates and lets a test intercept operations. */
class Spy implements SyncTarget {
  ops: string[] = [];
  constructor(
    readonly inner: SyncTarget,
    readonly hooks: { afterOp?: (op: string, key: string) => void; head?: (key: string, info: ObjectInfo | undefined) => ObjectInfo | undefined } = {},
  ) {}
  get description() {
    return `spy of ${this.inner.description}`;
  }
  async put(key: string, body: PutBody, meta: PutMeta) {
    await this.inner.put(key, body, meta);
    this.ops.push(`put ${key}`);
    this.hooks.afterOp?.('put', key);
  }
  async putPointer(key: string, bytes: Uint8Array) {
    await this.inner.putPointer(key, bytes);
    this.ops.push(`pointer ${key}`);
    this.hooks.afterOp?.('pointer', key);
  }
  list(prefix: string) {
    return this.inner.list(prefix);
  }
  get(key: string) {
    return this.inner.get(key);
  }
  async head(key: string) {
    const i = await this.inner.head(key);
    return this.hooks.head ? this.hooks.head(key, i) : i;
  }
  async remove(key: string) {
    await this.inner.remove(key);
    this.ops.push(`remove ${key}`);
    this.hooks.afterOp?.('remove', key);
  }
  async close() {}
}

describe('what travels', () => {
  it('ships each table as its latest snapshot alone plus every tag, and only new files afterwards', async () => {
    const fx = site();
    fx.table('stock').createTag('agent-1');
    fx.table('approval_inbox').createTag('agent-1');
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);

    for (const name of ['stock', 'approval_inbox', 'decision_log']) {
      const dir = hqTable(hq, fx.site, name);
      const latest = fx.table(name).latestSnapshot()!.id;
      expect(readdirSync(join(dir, 'snapshot')).sort(), name).toEqual(['EARLIEST', 'LATEST', `snapshot-${latest}`]);
      expect(readFileSync(join(dir, 'snapshot', 'EARLIEST'), 'utf8')).toBe(String(latest));
      expect(readFileSync(join(dir, 'snapshot', 'LATEST'), 'utf8')).toBe(String(latest));
      const at = Table.open(dir);
      expect(scanSorted(at)).toEqual(scanSorted(fx.table(name)));
      // hold tags never travel and are gone on the site once HQ has the snapshot
      expect(at.listTags().map((t) => t.name).filter((n) => n.startsWith('sync-'))).toEqual([]);
      expect(fx.table(name).listTags().map((t) => t.name).filter((n) => n.startsWith('sync-'))).toEqual([]);
    }
    const stockHq = Table.open(hqTable(hq, fx.site, 'stock'));
    expect(stockHq.listTags().map((t) => t.name)).toEqual(['agent-1']);
    expect(scanSorted(stockHq, { tag: 'agent-1' })).toEqual(scanSorted(fx.table('stock'), { tag: 'agent-1' }));
    expect(existsSync(join(hq, sitePrefix(fx.site), '.tilstand', 'contracts', 'inventory.stock', 'v1.json'))).toBe(true);

    // A new tag after a small change costs only its new files, not a full copy.
    const fullCopy = filesUnder(hqTable(hq, fx.site, 'stock'))
      .filter((f) => !f.startsWith('snapshot') && !f.startsWith('tag'))
      .reduce((s, f) => s + readFileSync(join(hqTable(hq, fx.site, 'stock'), f)).length, 0);
    writeStock(fx, 2000, 2010, 2);
    fx.table('stock').createTag('agent-2');
    const before = e.outbox.rows().length;
    await syncAll(e);
    const newRows = e.outbox.rows().slice(before);
    const stockBytes = newRows.filter((r) => r.table_name === 'stock' && r.op === 'put').reduce((s, r) => s + r.sent_bytes, 0);
    console.log(`sync: full copy of stock ${fullCopy} bytes; agent-2 + new snapshot sent ${stockBytes} bytes`);
    expect(stockBytes).toBeGreaterThan(0);
    expect(stockBytes).toBeLessThan(fullCopy / 2);
    // No file was sent twice.
    const sentKeys = e.outbox.rows().filter((r) => r.op === 'put' && r.sent_bytes > 0).map((r) => r.key);
    expect(new Set(sentKeys).size).toBe(sentKeys.length);
    const dir = hqTable(hq, fx.site, 'stock');
    const latest = fx.table('stock').latestSnapshot()!.id;
    expect(readdirSync(join(dir, 'snapshot')).sort()).toEqual(['EARLIEST', 'LATEST', `snapshot-${latest}`]);
    expect(Table.open(dir).listTags().map((t) => t.name)).toEqual(['agent-1', 'agent-2']);
    expect(scanSorted(Table.open(dir))).toEqual(scanSorted(fx.table('stock')));

    if (paimonCheckAvailable('paimon-check of the HQ copy')) {
      for (const name of ['stock', 'approval_inbox', 'decision_log']) {
        const r = paimonCheck(hqTable(hq, fx.site, name));
        expect(r.problems, r.output).toBe(0);
      }
    }
    await e.close();
  });

  it("ships and keeps an operator's own tag whose name starts with sync- (sync-before-upgrade): only the engine's sync-<snapshot id> is a hold tag", async () => {
    const fx = site('23', 50);
    const hq = hqDir();
    const stock = fx.table('stock');
    // `tilstand table tag create … stock sync-before-upgrade` accepts these names.
    stock.createTag('sync-before-upgrade');
    stock.createTag('sync-01');
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await e.enqueueSnapshotSync();
    expect(stock.listTags().map((t) => t.name)).toEqual(['sync-01', `sync-${stock.latestSnapshot()!.id}`, 'sync-before-upgrade']);
    await syncAll(e);
    expect(stock.listTags().map((t) => t.name)).toEqual(['sync-01', 'sync-before-upgrade']); // the hold tag released
    expect(Table.open(hqTable(hq, fx.site, 'stock')).listTags().map((t) => t.name)).toEqual(['sync-01', 'sync-before-upgrade']);
    await e.close();
  });

  it('forgets finished steps once they are old, and never lists HQ: the outbox stays the size of what the site holds, and nothing is sent twice', async () => {
    const fx = site('8', 200);
    const hq = hqDir();
    const listings: string[] = [];
    const spy = new (class extends Spy {
      override list(prefix: string) {
        listings.push(prefix);
        return super.list(prefix);
      }
    })(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    let now = Date.now();
    const keepMs = 600_000;
    const e = engine(fx, spy, { clock: () => now, outboxKeepMs: keepMs });
    const stock = fx.table('stock');
    const live = (): string[] => stock.listTags().map((t) => t.name);
    const sizes: number[] = [];
    let lateSteps = -1;
    for (let i = 1; i <= 40; i++) {
      writeStock(fx, i * 10, i * 10 + 10, i);
      stock.createTag(`agent-${i}`);
      if (i > 5) stock.deleteTag(`agent-${i - 5}`); // the site's retention: five runs
      if (i === 30) fx.table('approval_inbox').createTag('late'); // its files went to HQ in round 1
      await e.enqueueSnapshotSync();
      for (let r = 0; r < 50 && e.status().pendingItems > 0; r++) await e.runOnce();
      expect(e.status().pendingItems).toBe(0);
      sizes.push(e.outbox.rows().length);
      if (i === 30) lateSteps = e.outbox.rows().filter((r) => r.unit === 'tag:approval_inbox:late').length;
      now += 60_000;
    }
    // HQ's tables were never listed (that grows with everything HQ keeps), only each table's
    // snapshot/ (one snapshot there) by the prune step: the outbox's record of verified files
    // answered, also for a tag of files sent long ago (its pointer alone travelled).
    expect(listings.length).toBeGreaterThan(0);
    for (const p of listings) expect(p).toMatch(/\/snapshot\/$/);
    expect(lateSteps).toBe(1);
    // Bounded: past the keep time the outbox stops growing with the rounds.
    console.log(`sync outbox rows by round: ${sizes.join(' ')}`);
    const late = sizes.slice(20);
    expect(Math.max(...late)).toBeLessThan(sizes[12]! * 1.5);
    expect(Math.max(...late) - Math.min(...late)).toBeLessThan(sizes[12]!);
    // What is left: nothing of a tag the site no longer has, nor of an old snapshot, once ended long
    // enough ago; each tag the site holds still known as done (not planned again); the record of
    // what HQ holds names only files the site still has.
    const cutoff = now - keepMs - 60_000;
    for (const r of e.outbox.rows().filter((x) => x.created_ms < cutoff && x.unit.includes(':stock:'))) {
      expect(r.unit.startsWith('tag:') ? live().includes(r.unit.split(':')[2]!) : Number(r.unit.split(':')[2]) === stock.latestSnapshot()!.id, r.unit).toBe(true);
      expect(r.op, r.unit).not.toBe('put');
    }
    for (const t of live()) expect(e.outbox.unitState(`tag:stock:${t}`), t).toBe('done');
    const record = e.outbox.atHqEntries();
    expect(record.length).toBeGreaterThan(0);
    for (const r of record) expect(existsSync(r.src!), r.key).toBe(true);
    // Nothing was sent twice, and HQ holds the latest state and the run tags the site holds, plus
    // those it expired within the keep time (their units not yet forgotten); each run tag it no
    // longer holds was removed there once.
    const puts = spy.ops.filter((o) => o.startsWith('put '));
    expect(new Set(puts).size).toBe(puts.length);
    const at = Table.open(hqTable(hq, fx.site, 'stock'));
    const atHq = at.listTags().map((t) => t.name);
    for (const t of live()) expect(atHq).toContain(t);
    expect(atHq.length).toBeLessThan(20);
    const removes = spy.ops.filter((o) => o.startsWith('remove ') && o.includes('/tag/'));
    expect(new Set(removes).size).toBe(removes.length);
    expect(removes.length + atHq.length).toBe(40);
    expect(scanSorted(at)).toEqual(scanSorted(stock));
    expect(scanSorted(at, { tag: 'agent-40' })).toEqual(scanSorted(stock, { tag: 'agent-40' }));
    expect(scanSorted(Table.open(hqTable(hq, fx.site, 'approval_inbox')), { tag: 'late' })).toEqual(scanSorted(fx.table('approval_inbox'), { tag: 'late' }));
    await e.close();
  });

  it('a run tag the site expired leaves HQ as well, once; every other tag and every file stays', async () => {
    const fx = site('11', 300);
    const stock = fx.table('stock');
    const keepMs = 600_000;
    const hqs = [hqDir(), hqDir()];
    let now = Date.now();
    const spies = hqs.map((hq) => new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) })));
    // The second, opened once the first is closed (one sender per data directory), keeps every tag.
    const engines = [engine(fx, spies[0]!, { clock: () => now, outboxKeepMs: keepMs })];
    const round = async (e: SyncEngine) => {
      await e.enqueueSnapshotSync();
      for (let r = 0; r < 50 && e.status().pendingItems > 0; r++) await e.runOnce();
      expect(e.status().pendingItems).toBe(0);
    };
    writeStock(fx, 300, 320, 3);
    for (const t of ['agent-1', 'agent-2', 'hourly-2026120112', 'decision-P-1-1']) stock.createTag(t);
    await round(engines[0]!);
    // HQ read through a cache (as S3 is: HqStore mirrors it first) shows the tags HQ holds.
    const cacheDir = tempDir('hq-cache');
    cleanup.push(cacheDir);
    const store = new HqStore(new Spy(new DirectoryTarget(hqs[0]!)), { cacheDir });
    expect((await store.openTable(fx.site, 'stock')).tags.exists('agent-1')).toBe(true);
    const filesBefore = filesUnder(hqTable(hqs[0]!, fx.site, 'stock')).filter((f) => !f.startsWith('tag/') && !f.startsWith('snapshot/'));
    // The site expires a run tag, an hourly tag and a decision tag.
    for (const t of ['agent-1', 'hourly-2026120112', 'decision-P-1-1']) stock.deleteTag(t);
    now += keepMs / 2;
    await round(engines[0]!);
    // Not before the keep time: the tag's unit is still remembered whole.
    expect(Table.open(hqTable(hqs[0]!, fx.site, 'stock')).tags.exists('agent-1')).toBe(true);
    now += keepMs;
    await round(engines[0]!);
    const at = Table.open(hqTable(hqs[0]!, fx.site, 'stock'));
    expect(at.listTags().map((t) => t.name).sort()).toEqual(['agent-2', 'decision-P-1-1', 'hourly-2026120112']);
    expect(spies[0]!.ops.filter((o) => o.startsWith('remove ') && o.includes('/tag/'))).toEqual([`remove ${sitePrefix(fx.site)}stock/tag/tag-agent-1`]);
    // Only the pointer went: every file HQ had is still there, and the tags left read as on the site.
    for (const f of filesBefore) expect(existsSync(join(hqTable(hqs[0]!, fx.site, 'stock'), f)), f).toBe(true);
    expect(scanSorted(at, { tag: 'agent-2' })).toEqual(scanSorted(stock, { tag: 'agent-2' }));
    expect((await store.openTable(fx.site, 'stock')).listTags().map((t) => t.name).sort()).toEqual(['agent-2', 'decision-P-1-1', 'hourly-2026120112']);
    if (paimonCheckAvailable('paimon-check after a tag left HQ')) {
      const r = paimonCheck(hqTable(hqs[0]!, fx.site, 'stock'));
      expect(r.problems, r.output).toBe(0);
    }
    // Later rounds neither remove it again nor keep the step: the outbox forgets it too.
    now += keepMs * 2;
    await round(engines[0]!);
    await round(engines[0]!);
    expect(spies[0]!.ops.filter((o) => o.startsWith('remove ') && o.includes('/tag/'))).toHaveLength(1);
    expect(engines[0]!.outbox.rows().filter((r) => r.unit.startsWith('untag:') || r.unit === 'tag:stock:agent-1')).toEqual([]);
    await engines[0]!.close();
    // With `hqDropsExpiredTags: []`, HQ keeps the expired run tag: the second engine (on the same
    // site.db, another target) sends agent-2 only (agent-1 is gone), and its run tags stay.
    engines.push(engine(fx, spies[1]!, { clock: () => now, outboxKeepMs: keepMs, hqDropsExpiredTags: [] }));
    stock.createTag('agent-3');
    await round(engines[1]!);
    stock.deleteTag('agent-2');
    now += keepMs * 2;
    await round(engines[1]!);
    expect(Table.open(hqTable(hqs[1]!, fx.site, 'stock')).listTags().map((t) => t.name)).toEqual(['agent-2', 'agent-3']);
    expect(spies[1]!.ops.filter((o) => o.startsWith('remove ') && o.includes('/tag/'))).toEqual([]);
    await engines[1]!.close();
  });

  it('an outbox from before remove steps is rebuilt once at open, every row and id kept', () => {
    const dir = tempDir('old-outbox');
    cleanup.push(dir);
    const path = join(dir, 'site.db');
    const old = new Database(path);
    old.exec(`CREATE TABLE sync_outbox (
      id INTEGER PRIMARY KEY AUTOINCREMENT, unit TEXT NOT NULL, table_name TEXT, phase INTEGER NOT NULL,
      op TEXT NOT NULL CHECK (op IN ('put', 'pointer', 'prune', 'release')), src TEXT, body BLOB, key TEXT,
      size INTEGER NOT NULL DEFAULT 0, sha256 TEXT, md5 TEXT, priority INTEGER NOT NULL,
      state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'cancelled')),
      attempts INTEGER NOT NULL DEFAULT 0, next_attempt_ms INTEGER NOT NULL DEFAULT 0, last_error TEXT,
      created_ms INTEGER NOT NULL, done_ms INTEGER, sent_bytes INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX sync_outbox_unit ON sync_outbox (unit, phase, state);
      INSERT INTO sync_outbox (id, unit, phase, op, key, size, priority, state, created_ms, done_ms) VALUES
        (7, 'tag:stock:agent-1', 3, 'pointer', 'site_1.db/stock/tag/tag-agent-1', 10, 2, 'done', 1, 2),
        (9, 'snapshot:stock:4', 0, 'put', 'site_1.db/stock/data-1', 99, 2, 'pending', 3, NULL);`);
    expect(() => old.prepare(`INSERT INTO sync_outbox (unit, phase, op, priority, created_ms) VALUES ('u', 0, 'remove', 2, 4)`).run()).toThrow(/CHECK/);
    old.close();
    const db = openOutboxDb(path);
    const outbox = new Outbox(db);
    expect(outbox.rows().map((r) => [r.id, r.unit, r.op, r.state])).toEqual([
      [7, 'tag:stock:agent-1', 'pointer', 'done'],
      [9, 'snapshot:stock:4', 'put', 'pending'],
    ]);
    outbox.add([{ unit: 'untag:stock:agent-1', phase: 0, op: 'remove', key: 'site_1.db/stock/tag/tag-agent-1', priority: 2 }], 5);
    expect(outbox.rows().map((r) => r.id)).toEqual([7, 9, 10]);
    const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sync_outbox' AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all();
    expect(indexes).toEqual(['sync_outbox_done', 'sync_outbox_key', 'sync_outbox_pending', 'sync_outbox_unit']);
    db.close();
    // Opened again: nothing to rebuild.
    const again = openOutboxDb(path);
    expect(new Outbox(again).rows()).toHaveLength(3);
    again.close();
  });

  it("a table's pending units are those of its name exactly (LIKE matched other cases too)", () => {
    const dir = tempDir('units');
    cleanup.push(dir);
    const db = openOutboxDb(join(dir, 'site.db'));
    const outbox = new Outbox(db);
    const step = (unit: string) => ({ unit, phase: 0, op: 'put' as const, key: `k/${unit}`, priority: 2 });
    outbox.add(['snapshot:stock:1', 'snapshot:Stock:2', 'snapshot:stock_x:3', 'snapshot:stockx:4', 'tag:stock:agent-1'].map(step), 1);
    expect(outbox.pendingUnits('snapshot:stock:')).toEqual(['snapshot:stock:1']);
    expect(outbox.pendingUnits('snapshot:Stock:')).toEqual(['snapshot:Stock:2']);
    db.close();
  });

  it('the record of what HQ holds forgets files the site deleted, a bounded slice per planning round', async () => {
    const fx = site('12', 300);
    const stock = fx.table('stock');
    stock.createTag('hourly-2026120100');
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), { atHqCheckedPerRound: 3 });
    await syncAll(e);
    // The tag goes and new data overwrites every row: expiration deletes the tag's files on the site.
    stock.deleteTag('hourly-2026120100');
    for (let i = 0; i < 4; i++) writeStock(fx, 0, 300, 3 + i);
    const w = stock.newWriter();
    w.expire();
    w.close();
    const gone = () => e.outbox.atHqEntries().filter((x) => x.src !== null && !existsSync(x.src)).length;
    const before = gone();
    expect(before).toBeGreaterThan(3);
    await e.enqueueSnapshotSync();
    // One round checks three entries, so it forgets at most three.
    expect(before - gone()).toBeLessThanOrEqual(3);
    // The walk goes on where it stopped, and comes round to every entry.
    for (let r = 0; r < 100 && gone() > 0; r++) await e.enqueueSnapshotSync();
    expect(gone()).toBe(0);
    await syncAll(e);
    expect(scanSorted(Table.open(hqTable(hq, fx.site, 'stock')))).toEqual(scanSorted(stock));
    await e.close();
  });

  it("keeps the site's tables open from round to round: a tag file is read once, and a table the site altered is opened again", async () => {
    const fx = site('13', 300);
    const stock = fx.table('stock');
    for (let i = 0; i < 40; i++) stock.createTag(`agent-${i}`);
    const tagReads: string[] = [];
    const io = new (class extends ForwardingFileIO {
      override readFile(path: string) {
        if (path.includes('/tag/')) tagReads.push(path);
        return super.readFile(path);
      }
      override readFileIfExists(path: string) {
        if (path.includes('/tag/')) tagReads.push(path);
        return super.readFileIfExists(path);
      }
    })(localFileIO);
    const e = engine(fx, new DirectoryTarget(hqDir(), { writePrefix: sitePrefix(fx.site) }), { catalog: { fileIO: io } });
    await syncAll(e);
    // Past the racy window (core/lsm file-identity.ts), a cached tag is trusted on its stat alone.
    await new Promise((r) => setTimeout(r, RACY_MS + 100));
    await e.enqueueSnapshotSync();
    tagReads.length = 0;
    await e.enqueueSnapshotSync();
    await e.enqueueSnapshotSync();
    // Nothing new: no tag file read again (opened afresh each round, every one was).
    expect(tagReads).toEqual([]);
    stock.createTag('agent-new');
    await e.enqueueSnapshotSync();
    expect(new Set(tagReads.map((p) => p.slice(p.lastIndexOf('/') + 1)))).toEqual(new Set(['tag-agent-new']));
    expect(e.outbox.unitState('tag:stock:agent-new')).toBe('pending');
    // The site adds a column: the engine's table is opened again, with the new schema.
    const before = e.openTables().get('stock')!;
    stock.alter([{ kind: 'addColumn', name: 'bin', type: 'STRING' }]);
    const after = e.openTables().get('stock')!;
    expect(after).not.toBe(before);
    expect(after.schema.fields.map((f) => f.name)).toContain('bin');
    expect(e.openTables().get('stock')).toBe(after);
    await syncAll(e);
    await e.close();
  });

  it("asks the outbox only about tags not settled in an earlier round: one by one when few, else in one query", async () => {
    const fx = site('19', 300);
    const stock = fx.table('stock');
    const day = 24 * 3600_000;
    for (let i = 0; i < 100; i++) stock.createTag(`agent-${String(i).padStart(3, '0')}`, undefined, 7 * day);
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    const many = vi.spyOn(e.outbox, 'unitStates');
    const one = vi.spyOn(e.outbox, 'unitState');
    const asked = () => ({ many: many.mock.calls.filter((c) => c[0] === 'tag:stock:').length, one: one.mock.calls.filter((c) => String(c[0]).startsWith('tag:stock:')).length });
    await syncAll(e); // every tag new: one query for the table
    await e.enqueueSnapshotSync(); // all done now: one query again, and they are settled
    expect(asked()).toEqual({ many: 2, one: 0 });
    many.mockClear();
    await e.enqueueSnapshotSync();
    expect(asked()).toEqual({ many: 0, one: 0 });
    // The agent's next run tag: asked about alone, until it is done.
    stock.createTag('agent-new', undefined, 7 * day);
    await e.enqueueSnapshotSync();
    expect(asked()).toEqual({ many: 0, one: 1 });
    expect(e.outbox.unitState('tag:stock:agent-new')).toBe('pending');
    await syncAll(e);
    one.mockClear();
    await e.enqueueSnapshotSync();
    expect(asked()).toEqual({ many: 0, one: 1 }); // found done, and settled
    one.mockClear();
    await e.enqueueSnapshotSync();
    expect(asked()).toEqual({ many: 0, one: 0 });
    // A renewed tag is asked about again: its JSON goes to HQ once more.
    stock.renewTag('agent-050', 8 * day);
    one.mockClear();
    await e.enqueueSnapshotSync();
    expect(asked()).toEqual({ many: 0, one: 1 });
    expect(e.outbox.unitState('tag:stock:agent-050')).toBe('pending');
    await syncAll(e);
    expect(stockTagAtHq(hq, fx.site, 'agent-050')).toBe(stockTagOnSite(fx, 'agent-050'));
    await e.close();
  });

  it('a tag renewed on the site reaches HQ again (its JSON alone), also after a restart', async () => {
    const { fx, stock, day, hq, tagAtHq, tagOnSite } = twoAgentTags('14', 300);
    let spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    let e = engine(fx, spy);
    await syncAll(e);
    expect(tagAtHq('agent-1')).toBe(tagOnSite('agent-1'));
    // The agent keeps a cited run tag: its retention restarts (core/lsm renewTag).
    stock.renewTag('agent-1', 8 * day);
    expect(tagAtHq('agent-1')).not.toBe(tagOnSite('agent-1'));
    spy.ops.length = 0;
    await syncAll(e);
    expect(spy.ops).toEqual([`pointer ${sitePrefix(fx.site)}stock/tag/tag-agent-1`]);
    expect(tagAtHq('agent-1')).toBe(tagOnSite('agent-1'));
    expect(Table.open(hqTable(hq, fx.site, 'stock')).tags.get('agent-1').retainedMillis).toBe(8 * day);
    await syncAll(e);
    expect(spy.ops).toHaveLength(1);
    await e.close();
    // A new process knows what HQ got from the outbox: nothing is sent again until the next renewal.
    spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    e = engine(fx, spy);
    await syncAll(e);
    expect(spy.ops).toEqual([]);
    stock.renewTag('agent-2', 9 * day);
    await syncAll(e);
    expect(spy.ops).toEqual([`pointer ${sitePrefix(fx.site)}stock/tag/tag-agent-2`]);
    expect(tagAtHq('agent-2')).toBe(tagOnSite('agent-2'));
    await e.close();
  });

  it('a tag deleted and created again on another snapshot reaches HQ with that snapshot and its files, with retention or without', async () => {
    const fx = site('24', 50);
    const stock = fx.table('stock');
    const first = stock.latestSnapshot()!.id;
    stock.createTag('baseline', first); // no retention: the same stamp but for the snapshot
    stock.createTag('weekly', first, 7 * 24 * 3600_000); // a new creation time: looked like a renewal
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    const moved = writeStock(fx, 50, 80, 2);
    await new Promise((r) => setTimeout(r, 5)); // another creation time for `weekly`
    for (const [name, retained] of [['baseline', undefined], ['weekly', 7 * 24 * 3600_000]] as const) {
      stock.deleteTag(name);
      stock.createTag(name, moved, retained);
    }
    writeStock(fx, 80, 90, 3); // the latest is newer than the snapshot the tags name now
    await syncAll(e);
    const dir = hqTable(hq, fx.site, 'stock');
    const missing = referencedFiles(stock, stock.tags.get('baseline')!.snapshot)
      .map((f) => f.rel)
      .filter((rel) => !existsSync(join(dir, ...rel.split('/'))));
    expect(missing).toEqual([]);
    const atHq = Table.open(dir);
    expect(atHq.listTags().map((t) => [t.name, t.snapshot.id])).toEqual([
      ['baseline', moved],
      ['weekly', moved],
    ]);
    expect(scanSorted(atHq, { tag: 'baseline' })).toEqual(scanSorted(stock, { tag: 'baseline' }));
    await e.close();
  });

  it('a tag moved to another snapshot while its first version still waits for HQ: the new version goes, not a step stuck on files the site swept', async () => {
    const fx = site('30', 50);
    const stock = fx.table('stock');
    const first = stock.latestSnapshot()!.id;
    stock.createTag('baseline', first);
    const hq = hqDir();
    let up = false;
    const down = (): void => {
      if (!up) throw new SyncError('Transport', 'connect ENETUNREACH');
    };
    const target = new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) });
    const e = engine(fx, {
      description: target.description,
      put: async (k, b, m) => (down(), target.put(k, b, m)),
      putPointer: async (k, b) => (down(), target.putPointer(k, b)),
      list: (p) => target.list(p),
      get: (k) => target.get(k),
      head: async (k) => (down(), target.head(k)),
      remove: async (k) => (down(), target.remove(k)),
      close: async () => {},
    });
    await e.enqueueSnapshotSync(); // HQ unreachable: baseline's unit waits with the first snapshot's files
    await e.runOnce();
    // The operator moves baseline while the line is down; the first snapshot expires, and once the
    // next plan releases its hold tag, its own files (manifest lists at least) are swept.
    writeStock(fx, 50, 80, 2);
    const moved = writeStock(fx, 80, 90, 3);
    stock.deleteTag('baseline');
    stock.createTag('baseline', moved);
    await e.enqueueSnapshotSync();
    writeStock(fx, 90, 95, 4);
    writeStock(fx, 95, 99, 5);
    const stockDir = join(fx.data, 'warehouse', sitePrefix(fx.site), 'stock');
    expect(existsSync(join(stockDir, 'snapshot', `snapshot-${first}`))).toBe(false);
    up = true;
    await e.syncNow(10);
    expect(e.status().lastError).toBeNull();
    expect(e.status().pendingItems).toBe(0);
    const atHq = Table.open(hqTable(hq, fx.site, 'stock'));
    expect(atHq.listTags().map((t) => [t.name, t.snapshot.id])).toEqual([['baseline', moved]]);
    expect(scanSorted(atHq, { tag: 'baseline' })).toEqual(scanSorted(stock, { tag: 'baseline' }));
    await e.close();
  });

  it('a table rolled back on the site (snapshot ids used again) reaches HQ: the snapshot HQ has is the one the site has', async () => {
    const fx = site('33', 50);
    const stock = fx.table('stock');
    const good = stock.latestSnapshot()!.id;
    stock.createTag('good', good);
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    writeStock(fx, 50, 80, 2);
    await syncAll(e);
    writeStock(fx, 80, 90, 3);
    await syncAll(e);
    const atHq = () => Table.open(hqTable(hq, fx.site, 'stock'));
    const w = stock.newWriter();
    w.rollbackTo('good'); // an operator's `tilstand table rollback`: the later snapshots are gone
    w.close();
    expect(stock.latestSnapshot()!.id).toBe(good);
    await syncAll(e);
    expect(atHq().latestSnapshot()!.id).toBe(good);
    expect(scanSorted(atHq())).toEqual(scanSorted(stock));
    // The site writes on: its next snapshots have the ids of those rolled back, HQ shipped before.
    writeStock(fx, 90, 95, 4);
    await syncAll(e);
    expect(atHq().latestSnapshot()!.id).toBe(good + 1);
    expect(scanSorted(atHq())).toEqual(scanSorted(stock));
    await e.close();
  });

  it('a fresh outbox asks HQ per key what it already holds, and sends none of it again', async () => {
    const fx = site('9', 300);
    fx.table('stock').createTag('agent-1');
    const hq = hqDir();
    const first = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(first);
    await first.close();
    // site.db's outbox lost (the site.db of a PC set up again): the record of what HQ holds with it.
    const db = openOutboxDb(join(fx.data, 'site.db'));
    db.exec('DELETE FROM sync_outbox; DELETE FROM sync_at_hq;');
    db.close();
    const spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    const again = engine(fx, spy);
    await syncAll(again);
    expect(spy.ops.filter((o) => o.startsWith('put ') || o.startsWith('pointer '))).toEqual([]);
    // The tag and the latest snapshot were found at HQ (one HEAD each) and recorded as done, so
    // none of their files was planned, and they are not asked again.
    expect(again.outbox.rows().filter((r) => r.op === 'put')).toEqual([]);
    expect(again.outbox.unitState('tag:stock:agent-1')).toBe('done');
    const before = again.outbox.rows().length;
    await again.enqueueSnapshotSync();
    expect(again.outbox.rows().length).toBe(before);
    await again.close();
  });

  it('a tag a fresh outbox found at HQ is recorded with its JSON: a later renewal reaches HQ, and a version HQ holds from before a renewal is sent again', async () => {
    const { fx, stock, day, hq, tagAtHq, tagOnSite } = twoAgentTags('25', 50);
    const first = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(first);
    await first.close();
    // site.db's outbox lost (as after `tilstand restore`); meanwhile agent-2 was renewed on the site.
    const db = openOutboxDb(join(fx.data, 'site.db'));
    db.exec('DELETE FROM sync_outbox; DELETE FROM sync_at_hq;');
    db.close();
    stock.renewTag('agent-2', 8 * day);
    const spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    const e = engine(fx, spy);
    await syncAll(e);
    expect(spy.ops.filter((o) => o.startsWith('pointer ') && o.includes('/tag/'))).toEqual([`pointer ${sitePrefix(fx.site)}stock/tag/tag-agent-2`]);
    expect(tagAtHq('agent-2')).toBe(tagOnSite('agent-2'));
    // agent-1 was found at HQ as the site has it; its renewal now goes too.
    stock.renewTag('agent-1', 8 * day);
    spy.ops.length = 0;
    await syncAll(e);
    expect(spy.ops).toEqual([`pointer ${sitePrefix(fx.site)}stock/tag/tag-agent-1`]);
    expect(tagAtHq('agent-1')).toBe(tagOnSite('agent-1'));
    await e.close();
  });

  it('a new target (a USB disk swapped, HQ moved) gets everything: the outbox starts again for it', async () => {
    const fx = site('10', 300);
    fx.table('stock').createTag('agent-1');
    const a = hqDir();
    const first = engine(fx, new DirectoryTarget(a, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(first);
    await first.close();
    writeStock(fx, 300, 320, 3);
    fx.table('stock').createTag('agent-2');
    const b = hqDir();
    const lines: string[] = [];
    const second = engine(fx, new DirectoryTarget(b, { writePrefix: sitePrefix(fx.site) }), { log: (l) => lines.push(l) });
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^sync: the target changed from dir:${a}.* to dir:${b}.*: \\d+ steps of the old one dropped; everything is sent again$`))]);
    await syncAll(second);
    for (const name of ['stock', 'approval_inbox', 'decision_log']) expect(scanSorted(Table.open(hqTable(b, fx.site, name))), name).toEqual(scanSorted(fx.table(name)));
    const stockB = Table.open(hqTable(b, fx.site, 'stock'));
    expect(stockB.listTags().map((t) => t.name)).toEqual(['agent-1', 'agent-2']);
    expect(scanSorted(stockB, { tag: 'agent-1' })).toEqual(scanSorted(fx.table('stock'), { tag: 'agent-1' }));
    if (paimonCheckAvailable('paimon-check of the new target')) {
      const r = paimonCheck(hqTable(b, fx.site, 'stock'));
      expect(r.problems, r.output).toBe(0);
    }
    // Back on the first one: it is a target change again, and the first HQ catches up.
    await second.close();
    const third = engine(fx, new DirectoryTarget(a, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(third);
    expect(Table.open(hqTable(a, fx.site, 'stock')).listTags().map((t) => t.name)).toEqual(['agent-1', 'agent-2']);
    expect(scanSorted(Table.open(hqTable(a, fx.site, 'stock')))).toEqual(scanSorted(fx.table('stock')));
    await third.close();
  });

  it('sends proposals and decisions before bulk files', async () => {
    const fx = site('8');
    const e = engine(fx, new DirectoryTarget(hqDir(), { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    const order = e.outbox.rows().filter((r) => r.done_ms !== null).sort((a, b) => a.done_ms! - b.done_ms! || a.id - b.id);
    const firstBulk = order.findIndex((r) => r.table_name === 'stock');
    const lastPriority = order.map((r) => r.table_name).lastIndexOf('decision_log');
    expect(Math.max(order.map((r) => r.table_name).lastIndexOf('approval_inbox'), lastPriority)).toBeLessThan(firstBulk);
    await e.close();
  });
});

describe('order and atomicity', () => {
  it('a listing observer never sees a snapshot or tag JSON before its files', async () => {
    const fx = site('9');
    fx.table('stock').createTag('agent-1');
    const hq = hqDir();
    const violations: string[] = [];
    let checks = 0;
    const observe = () => {
      checks++;
      for (const name of ['stock', 'approval_inbox', 'decision_log']) {
        const dir = hqTable(hq, fx.site, name);
        if (!existsSync(join(dir, 'schema'))) continue;
        const t = Table.open(dir);
        const pointers = [
          ...(existsSync(join(dir, 'snapshot')) ? readdirSync(join(dir, 'snapshot')).filter((n) => n.startsWith('snapshot-')) : []).map((n) => ({ what: n, s: t.snapshots.tryGet(Number(n.slice(9))) })),
          ...t.listTags().map((x) => ({ what: `tag-${x.name}`, s: x.snapshot })),
        ];
        for (const p of pointers) {
          try {
            for (const f of referencedFiles(t, p.s!)) if (!existsSync(join(dir, f.rel))) violations.push(`${name}/${p.what} visible before ${f.rel}`);
          } catch (e) {
            violations.push(`${name}/${p.what}: ${(e as Error).message}`);
          }
        }
      }
    };
    const spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), { afterOp: observe });
    const e = engine(fx, spy);
    await syncAll(e);
    writeStock(fx, 2000, 2100, 2);
    fx.table('stock').createTag('agent-2');
    await syncAll(e);
    expect(violations).toEqual([]);
    expect(checks).toBeGreaterThan(20);
    await e.close();
  });

  it('a file that fails verification holds back everything that refers to it, and is retried', async () => {
    const fx = site('10');
    const hq = hqDir();
    let lie = true;
    const stockPrefix = `${sitePrefix(fx.site)}stock/bucket-`;
    const spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), {
      head: (key, info) => (lie && info && key.startsWith(stockPrefix) ? { ...info, sha256: '0'.repeat(64) } : info),
    });
    const e = engine(fx, spy);
    await e.enqueueSnapshotSync();
    for (let i = 0; i < 5; i++) {
      await e.runOnce();
      await new Promise((r) => setTimeout(r, 10));
    }
    const stockDir = hqTable(hq, fx.site, 'stock');
    expect(existsSync(join(stockDir, 'snapshot'))).toBe(false);
    expect(spy.ops.some((o) => o.includes('stock/manifest/'))).toBe(false);
    // other tables went on
    expect(existsSync(join(hqTable(hq, fx.site, 'approval_inbox'), 'snapshot', 'LATEST'))).toBe(true);
    const failed = e.outbox.rows().filter((r) => r.state === 'pending' && r.attempts > 0);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.last_error).toMatch(/Verification|does not match/);
    expect(e.status().lastError).toMatch(/does not match/);
    lie = false;
    await syncAll(e);
    expect(scanSorted(Table.open(stockDir))).toEqual(scanSorted(fx.table('stock')));
    await e.close();
  });

  it('a table that cannot be planned (a data file missing on the site) holds back itself alone, is reported, and goes once the file is back', async () => {
    const fx = site('20', 50);
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    // New work on two tables; a new data file of approval_inbox's latest snapshot is lost on the site.
    const inbox = () => fx.table('approval_inbox');
    const before = new Set(referencedFiles(inbox(), inbox().latestSnapshot()!).map((f) => f.path));
    writeInbox(fx, 5, 8);
    const stockLatest = writeStock(fx, 50, 60, 2);
    const inboxLatest = inbox().latestSnapshot()!.id;
    const lost = referencedFiles(inbox(), inbox().latestSnapshot()!).find((f) => f.phase === 0 && !before.has(f.path) && f.rel.includes('bucket-'))!;
    const kept = readFileSync(lost.path);
    unlinkSync(lost.path);

    const plan = await e.enqueueSnapshotSync();
    expect(plan.units).toContain(`snapshot:stock:${stockLatest}`);
    expect(plan.units.filter((u) => u.startsWith('snapshot:approval_inbox:'))).toEqual([]);
    expect(inbox().tags.exists(`sync-${inboxLatest}`)).toBe(false); // the failed planning's hold tag is released
    // Reported at once; stalled once it has failed for a whole window, whatever else moves.
    expect(e.status()).toMatchObject({ healthy: true, lastError: expect.stringMatching(/^planning approval_inbox: .*missing on the site/) });
    expect(statusOf(e.outbox, Date.now() + 16 * 60_000, 15 * 60_000).healthy).toBe(false);

    // The loop runs the steps already planned even when a whole planning round fails.
    const planRound = e.enqueueSnapshotSync.bind(e);
    e.enqueueSnapshotSync = async () => {
      throw new Error('planning broke');
    };
    e.start(20);
    for (let i = 0; i < 250 && e.status().pendingItems > 0; i++) await new Promise((r) => setTimeout(r, 20));
    await e.stop();
    expect(readFileSync(join(hqTable(hq, fx.site, 'stock'), 'snapshot', 'LATEST'), 'utf8')).toBe(String(stockLatest));

    // The file back (from a backup): the next round plans the table, and the report clears.
    e.enqueueSnapshotSync = planRound;
    writeFileSync(lost.path, kept);
    await syncAll(e);
    expect(e.status()).toMatchObject({ healthy: true, lastError: null });
    expect(readFileSync(join(hqTable(hq, fx.site, 'approval_inbox'), 'snapshot', 'LATEST'), 'utf8')).toBe(String(inboxLatest));
    await e.close();
  });

  it('a contract edited while its older version waits for a retry: HQ ends with the version the site has', async () => {
    const fx = site('26', 20);
    const hq = hqDir();
    const key = `${sitePrefix(fx.site)}.tilstand/contracts/inventory.stock/v1.json`;
    const spy = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    const putPointer = spy.putPointer.bind(spy);
    let refused = 0;
    spy.putPointer = async (k, bytes) => {
      if (k === key && refused++ === 0) throw new SyncError('Transport', 'connection reset');
      return putPointer(k, bytes);
    };
    let now = 1_000_000;
    const e = engine(fx, spy, { clock: () => now, retry: { baseMs: 1000, maxMs: 5000, jitter: 0 } });
    await e.enqueueSnapshotSync();
    await e.runOnce(); // the contract's PUT fails: retried in 1 s
    const file = join(fx.data, 'contracts', 'inventory.stock', 'v1.json');
    writeFileSync(file, JSON.stringify({ name: 'inventory.stock', version: 1, fixed: 'typo' }));
    now += 100;
    await e.enqueueSnapshotSync(); // plans the edited contract
    await e.runOnce();
    now += 2000; // the older version's retry would be due now
    for (let i = 0; i < 5 && e.status().pendingItems > 0; i++) {
      await e.runOnce();
      now += 5000;
    }
    expect(e.status().pendingItems).toBe(0);
    expect(readFileSync(join(hq, ...key.split('/')), 'utf8')).toBe(readFileSync(file, 'utf8'));
    expect(spy.ops.filter((o) => o === `pointer ${key}`)).toHaveLength(1); // the older version never went
    await e.close();
  });
});

describe('outbox', () => {
  it('survives a restart: a new engine resumes without re-sending finished files', async () => {
    const fx = site('11');
    const hq = hqDir();
    const spy1 = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    const e1 = engine(fx, spy1);
    await e1.enqueueSnapshotSync();
    // run only some steps, then "crash" (close without finishing)
    let n = 0;
    const orig = e1.outbox.next.bind(e1.outbox);
    e1.outbox.next = (now: number) => (n++ < 6 ? orig(now) : undefined);
    await e1.runOnce();
    await e1.close();
    const sentBefore = spy1.ops.filter((o) => o.startsWith('put ')).map((o) => o.slice(4));
    expect(sentBefore.length).toBeGreaterThan(0);
    const spy2 = new Spy(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    const e2 = engine(fx, spy2);
    await syncAll(e2);
    const sentAfter = spy2.ops.filter((o) => o.startsWith('put ')).map((o) => o.slice(4));
    expect(sentAfter.filter((k) => sentBefore.includes(k))).toEqual([]);
    expect(scanSorted(Table.open(hqTable(hq, fx.site, 'stock')))).toEqual(scanSorted(fx.table('stock')));
    await e2.close();
  });

  it('one sender per data directory: a second engine is refused until the first closes; a dead owner is taken over', async () => {
    const fx = site('16', 50);
    const hq = hqDir();
    const e1 = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    expect(existsSync(join(fx.data, 'sync.lock'))).toBe(true);
    expect(() => engine(fx, new DirectoryTarget(hqDir()))).toThrow(/HQ sync outbox of .* one sender per data directory/);
    await e1.close();
    expect(existsSync(join(fx.data, 'sync.lock'))).toBe(false);
    // A lock left by a process that is gone (kill -9, power cut) does not hold the sync up.
    writeFileSync(join(fx.data, 'sync.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), token: 't', sinceMs: 1 }));
    const e2 = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e2);
    expect(scanSorted(Table.open(hqTable(hq, fx.site, 'stock')))).toEqual(scanSorted(fx.table('stock')));
    await e2.close();
  });

  it('syncNow waits for the loop: the two never send the same step twice', async () => {
    const fx = site('17', 500);
    fx.table('stock').createTag('agent-1');
    const puts = new Map<string, number>();
    // A slow target, so that an unserialized loop tick and syncNow would overlap.
    const slow = new DirectoryTarget(hqDir(), { writePrefix: sitePrefix(fx.site) });
    const spy = new Spy(slow, { afterOp: (op, key) => void (op === 'put' && puts.set(key, (puts.get(key) ?? 0) + 1)) });
    const put = spy.put.bind(spy);
    spy.put = async (key, body, meta) => {
      await new Promise((r) => setTimeout(r, 5));
      return put(key, body, meta);
    };
    const e = engine(fx, spy);
    e.start(60_000); // the first tick plans and runs at once
    const r = await e.syncNow(10);
    expect(r.status.pendingItems).toBe(0);
    expect(r.rounds).toBeGreaterThanOrEqual(1);
    expect(puts.size).toBeGreaterThan(0);
    expect([...puts].filter(([, n]) => n > 1)).toEqual([]);
    await e.close();
    expect(() => e.syncNow(0)).toThrow(/maxRounds: expected a positive integer/);
  });

  it('a clock stepped back does not hold retries for the length of the step', async () => {
    const fx = site('18', 50);
    let up = false;
    const inner = new DirectoryTarget(hqDir(), { writePrefix: sitePrefix(fx.site) });
    const flaky = new Spy(inner);
    for (const op of ['put', 'putPointer', 'list', 'head', 'get'] as const) {
      const f = (flaky as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[op]!.bind(flaky);
      (flaky as unknown as Record<string, unknown>)[op] = async (...a: unknown[]) => {
        if (!up) throw new SyncError('Transport', 'connect ENETUNREACH');
        return f(...a);
      };
    }
    let now = Date.UTC(2026, 11, 1, 9); // booted with a clock two hours fast, offline
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: flaky, clock: () => now, random: () => 0, retry: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, scheduledTags: null });
    await e.enqueueSnapshotSync();
    for (let i = 0; i < 8; i++) {
      await e.runOnce();
      now += 60_000;
    }
    expect(e.status().pendingItems).toBeGreaterThan(0);
    // The line comes up and NTP steps the clock back two hours.
    up = true;
    now -= 2 * 3600_000;
    await e.runOnce();
    now += 60_000; // one longest backoff later everything has gone, not two hours later
    for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) await e.runOnce();
    expect(e.status().pendingItems).toBe(0);
    await e.close();
  });

  it('backs off exponentially with jitter and reports health by progress', async () => {
    const fx = site('12', 50);
    const down: SyncTarget = {
      description: 'down',
      put: async () => {
        throw new SyncError('Transport', 'connect ECONNREFUSED');
      },
      putPointer: async () => {
        throw new SyncError('Transport', 'connect ECONNREFUSED');
      },
      list: async () => {
        throw new SyncError('Transport', 'connect ECONNREFUSED');
      },
      get: async () => {
        throw new SyncError('Transport', 'connect ECONNREFUSED');
      },
      head: async () => {
        throw new SyncError('Transport', 'connect ECONNREFUSED');
      },
      remove: async () => {},
      close: async () => {},
    };
    let now = 1_000_000;
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: down, clock: () => now, random: () => 0.5, retry: { baseMs: 100, maxMs: 1000, jitter: 0.5 }, scheduledTags: null });
    expect([1, 2, 3, 4, 5, 6].map((a) => e.backoff(a))).toEqual([75, 150, 300, 600, 750, 750]);
    await e.enqueueSnapshotSync();
    const r = await e.runOnce();
    expect(r.done).toBe(0);
    expect(r.failed).toBeGreaterThan(0);
    now += 60_000;
    // A minute of failures inside the 15-minute window: offline, not yet stalled.
    expect(e.status()).toMatchObject({ online: false, oldestUnsyncedMs: 60_000, healthy: true });
    now += 15 * 60_000 - 60_000;
    const s = e.status();
    expect(s.online).toBe(false);
    expect(s.pendingItems).toBeGreaterThan(0);
    expect(s.oldestUnsyncedMs).toBe(15 * 60_000);
    expect(s.healthy).toBe(false);
    expect(s.lastError).toMatch(/ECONNREFUSED/);
    await e.close();
    // the outbox is in site.db and readable by another connection
    const db = openOutboxDb(join(fx.data, 'site.db'));
    expect((db.prepare(`SELECT COUNT(*) AS n FROM sync_outbox WHERE state = 'pending'`).get() as { n: number }).n).toBe(s.pendingItems);
    db.close();
  });

  it('a newer snapshot supersedes one still on its way and releases its hold tag', async () => {
    const fx = site('13', 200);
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await e.enqueueSnapshotSync();
    const first = fx.table('stock').latestSnapshot()!.id;
    expect(fx.table('stock').tags.exists(`sync-${first}`)).toBe(true);
    const second = writeStock(fx, 200, 300, 2);
    await syncAll(e);
    expect(fx.table('stock').listTags().filter((t) => t.name.startsWith('sync-'))).toEqual([]);
    expect(e.outbox.rows().some((r) => r.unit === `snapshot:stock:${first}` && r.state === 'cancelled')).toBe(true);
    expect(readdirSync(join(hqTable(hq, fx.site, 'stock'), 'snapshot')).sort()).toEqual(['EARLIEST', 'LATEST', `snapshot-${second}`]);
    await e.close();
  });
});

describe('the loop', () => {
  /** Polls (bounded: 200 × 20 ms) until `done` holds. */
  async function until(done: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
  }

  it('plans again at once after the wall clock stepped back (NTP after a boot with a clock an hour fast)', async () => {
    const fx = site('21', 50);
    const hq = hqDir();
    let skew = 3_600_000;
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), { clock: () => Date.now() + skew });
    e.start(50);
    await until(() => e.status().lastSuccessMs !== null && e.status().pendingItems === 0);
    expect(e.status().pendingItems).toBe(0);
    skew = 0;
    const latest = writeStock(fx, 50, 60, 2);
    const hqLatest = () => readFileSync(join(hqTable(hq, fx.site, 'stock'), 'snapshot', 'LATEST'), 'utf8');
    await until(() => hqLatest() === String(latest));
    await e.stop();
    expect(hqLatest()).toBe(String(latest));
    await e.close();
  });

  it('waits at most one interval: a step back beyond 2^31 ms does not overflow setTimeout into a busy loop', async () => {
    const fx = site('22', 20);
    let skew = 30 * 86_400_000;
    const e = engine(fx, new DirectoryTarget(hqDir(), { writePrefix: sitePrefix(fx.site) }), { clock: () => Date.now() + skew });
    e.start(1000);
    await until(() => e.status().lastSuccessMs !== null && e.status().pendingItems === 0);
    expect(e.status().pendingItems).toBe(0);
    skew = 0;
    let runs = 0;
    const runOnce = e.runOnce.bind(e);
    e.runOnce = () => {
      runs++;
      return runOnce();
    };
    await new Promise((r) => setTimeout(r, 1500));
    const inWindow = runs;
    await until(() => runs > 0);
    await e.stop();
    expect(runs).toBeGreaterThan(0); // it ran after the step
    expect(inWindow).toBeLessThan(10); // one tick a second, not one a millisecond (hundreds)
    await e.close();
  });
});

describe('scheduled tags', () => {
  it('creates hourly-<yyyyMMddHH> once per hour on the configured tables', () => {
    const fx = site('14', 10);
    const t = Date.UTC(2026, 2, 5, 9, 30);
    expect(hourlyTagName(t)).toBe('hourly-2026030509');
    // The tables on the clock that names the tags, as the engine opens them: a tag stamped later
    // than the time it is named by is one a clock since stepped back made (hourly-tag-clock-step.test.ts).
    const now = { ms: t };
    const catalog = new Catalog(join(fx.data, 'warehouse'), { clock: () => now.ms });
    const open = (name: string) => catalog.getTable({ database: 'site_14', table: name });
    const tables = new Map([['stock', open('stock')], ['decision_log', open('decision_log')]]);
    expect(createScheduledTags(tables, { tables: ['stock'], retainedMs: 3_600_000 }, t)).toEqual(['stock:hourly-2026030509']);
    now.ms = t + 60_000;
    expect(createScheduledTags(tables, { tables: ['stock'] }, t + 60_000)).toEqual([]);
    now.ms = t + 3_600_000;
    expect(createScheduledTags(tables, { tables: '*' }, t + 3_600_000)).toEqual(['stock:hourly-2026030510', 'decision_log:hourly-2026030510']);
    expect(fx.table('stock').tags.get('hourly-2026030509').retainedMillis).toBe(3_600_000);
  });

  it("stamps an hourly tag with the engine's clock, the one that named it", async () => {
    // The tag was named by the engine's clock and stamped (its create time, which its retention
    // counts from) by the table's, Date.now: an engine given a clock made tags whose expiry
    // followed another clock than their names.
    const fx = site('16', 10);
    const t = Date.UTC(2026, 2, 5, 9, 30);
    const e = engine(fx, new DirectoryTarget(hqDir()), { clock: () => t, scheduledTags: { tables: ['stock'], retainedMs: 3_600_000 } });
    await e.enqueueSnapshotSync();
    const tag = fx.table('stock').tags.get('hourly-2026030509');
    expect(tag.createTimeMillis).toBe(localWallClockMillis(t));
    e.close();
  });
});

describe('memory', () => {
  it("opens the site's tables on the catalog options it is given (the site's shared run-cache budget)", () => {
    const fx = site('15', 50);
    const budget = new RunCacheBudget(8 * 1024 * 1024);
    const e = engine(fx, new DirectoryTarget(hqDir()), { catalog: { cacheBudget: budget } });
    const stock = e.openTables().get('stock')!;
    expect([...stock.reader().scan()].length).toBe(50);
    // The decoded files count against the budget handed in, not a default budget of the engine's own.
    expect(budget.entries.size).toBeGreaterThan(0);
    e.close();
  });
});

describe('retention and restore', () => {
  it('HQ keeps a tag the site has expired (other than a run tag), and a replaced site restores from HQ with its high-water marks', async () => {
    const fx = site('15');
    fx.table('stock').createTag('hourly-2026120110');
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    const tagged = scanSorted(fx.table('stock'), { tag: 'hourly-2026120110' });
    // Site side: the tag goes, new data overwrites, expiration sweeps the tag's files.
    fx.table('stock').deleteTag('hourly-2026120110');
    for (let i = 0; i < 4; i++) writeStock(fx, 0, 2000, 3 + i);
    const w = fx.table('stock').newWriter();
    w.expire();
    w.close();
    const site0 = fx.table('stock');
    expect(site0.listTags().map((t) => t.name)).toEqual([]);
    await syncAll(e);
    const store = new HqStore(new DirectoryTarget(hq));
    const atHq = await store.openTable(fx.site, 'stock');
    expect(atHq.listTags().map((t) => t.name)).toEqual(['hourly-2026120110']);
    expect(scanSorted(atHq, { tag: 'hourly-2026120110' })).toEqual(tagged);
    expect(await store.sites()).toEqual([fx.site]);
    expect(await store.tables(fx.site)).toEqual(['approval_inbox', 'decision_log', 'stock']);
    await e.close();

    // Restore into a fresh data directory.
    const fresh = tempDir('restored');
    cleanup.push(fresh);
    const note = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site });
    expect(Object.keys(note.tables).sort()).toEqual(['approval_inbox', 'decision_log', 'stock']);
    const restored = Table.open(join(fresh, 'warehouse', sitePrefix(fx.site), 'stock'));
    expect(scanSorted(restored)).toEqual(scanSorted(fx.table('stock')));
    expect(restored.snapshots.earliestId()).toBe(restored.snapshots.latestId());
    expect(scanSorted(restored, { tag: 'hourly-2026120110' })).toEqual(tagged);
    expect(existsSync(join(fresh, 'contracts', 'inventory.stock', 'v1.json'))).toBe(true);
    const hwm = fx.table('stock').committedProperties()['tilstand.hwm.inventory/stock'];
    expect(note.resync).toEqual(
      expect.arrayContaining([
        { module: 'inventory', stream: 'stock', afterSeq: Number(hwm), topic: `tilstand/${fx.site}/resync/inventory`, tables: { stock: Number(hwm) } },
        expect.objectContaining({ module: 'agents', stream: 'proposals', afterSeq: 5 }),
      ]),
    );
    expect(resyncRequests(fresh, fx.site)).toEqual(note.resync);
    expect(readRestoreNote(fresh)?.resync).toEqual(note.resync);
    // the restored site writes on from N+1
    const n = restored.snapshots.latestId()!;
    const w2 = restored.newWriter();
    w2.write(['new', 'loc', 1, 'x']);
    expect(w2.commit().snapshotId).toBe(n + 1);
    w2.close();
    // a second restore into a populated directory is refused
    await expect(restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site })).rejects.toThrow(/already holds tables/);
  });
});

describe('HQ reading while a site syncs', () => {
  it("an object store's copy never holds a snapshot or tag JSON without its files, when the site syncs between the pages of a listing", async () => {
    const fx = site('31', 200);
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    const stockPrefix = `${sitePrefix(fx.site)}stock/`;
    let synced = false;
    // An object store lists a site in pages, in key order: the site syncs a new snapshot and a new
    // tag of stock after the page that ended with stock's data files and manifests was listed —
    // while the copy is made (openTable lists the site's tables first, then mirrors).
    let listings = 0;
    const inner = new DirectoryTarget(hq);
    const paged: SyncTarget = {
      description: 'paged listing of an object store',
      put: (k, b, m) => inner.put(k, b, m),
      putPointer: (k, b) => inner.putPointer(k, b),
      async list(prefix) {
        const first = await inner.list(prefix);
        if (synced || prefix !== sitePrefix(fx.site) || listings++ === 0) return first;
        synced = true;
        writeStock(fx, 200, 400, 2);
        fx.table('stock').createTag('agent-2');
        await syncAll(e);
        const cut = `${stockPrefix}snapshot/`;
        return [...first.filter((o) => o.key < cut), ...(await inner.list(prefix)).filter((o) => o.key >= cut)];
      },
      get: (k) => inner.get(k),
      head: (k) => inner.head(k),
      remove: (k) => inner.remove(k),
      close: async () => {},
    };
    const cache = tempDir('hq-cache');
    cleanup.push(cache);
    const store = new HqStore(paged, { cacheDir: cache });
    const atHq = await store.openTable(fx.site, 'stock');
    expect(synced).toBe(true);
    const pointers = [...atHq.listTags().map((t) => ({ what: `tag-${t.name}`, s: t.snapshot })), { what: 'latest', s: atHq.latestSnapshot()! }];
    const missing = pointers.flatMap((p) => {
      try {
        return referencedFiles(atHq, p.s).filter((f) => !existsSync(f.path)).map((f) => `${p.what}: ${f.rel}`);
      } catch (err) {
        return [`${p.what}: ${(err as Error).message}`];
      }
    });
    expect(missing).toEqual([]);
    expect(scanSorted(atHq)).toEqual(scanSorted(fx.table('stock')));
    await e.close();
  });

  it("an object store's copy is made when a snapshot or tag listed at HQ goes before it is read (superseded; a run tag its site expired)", async () => {
    const fx = site('32', 200);
    fx.table('stock').createTag('agent-1');
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    const stockPrefix = `${sitePrefix(fx.site)}stock/`;
    const inner = new DirectoryTarget(hq);
    let synced = false;
    // The first read of one of stock's JSON files comes after the site shipped a newer snapshot
    // (the older one's JSON pruned at HQ) and took its expired run tag off HQ.
    const racing: SyncTarget = {
      description: 'an object store read while its site syncs',
      put: (k, b, m) => inner.put(k, b, m),
      putPointer: (k, b) => inner.putPointer(k, b),
      list: (p) => inner.list(p),
      async get(k) {
        if (!synced && k.startsWith(stockPrefix) && /\/(snapshot-\d+|tag-[^/]+)$/.test(k)) {
          synced = true;
          writeStock(fx, 200, 400, 2);
          fx.table('stock').deleteTag('agent-1');
          await syncAll(e);
          await new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }).remove(`${stockPrefix}tag/tag-agent-1`);
        }
        return inner.get(k);
      },
      head: (k) => inner.head(k),
      remove: (k) => inner.remove(k),
      close: async () => {},
    };
    const cache = tempDir('hq-cache');
    cleanup.push(cache);
    const atHq = await new HqStore(racing, { cacheDir: cache }).openTable(fx.site, 'stock');
    expect(synced).toBe(true);
    expect(atHq.latestSnapshot()!.id).toBe(fx.table('stock').latestSnapshot()!.id);
    expect(atHq.listTags()).toEqual([]);
    expect(scanSorted(atHq)).toEqual(scanSorted(fx.table('stock')));
    await e.close();
  });
});

describe('isolation at HQ', () => {
  it("a key a site's credentials could write under its prefix never makes a copy write outside that site's folder (`..` in an object store key)", async () => {
    const fx = site('34', 50);
    const hq = hqDir();
    const e = engine(fx, new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }));
    await syncAll(e);
    await e.close();
    // An object store takes `..` in a key literally, and a policy that limits a site's access key
    // to `site_34.db/*` lets it write these (with any client but Tilstand's, which refuses them).
    const inner = new DirectoryTarget(hq);
    const planted = [`${sitePrefix(fx.site)}stock/../../site_35.db/stock/tag/tag-planted`, `${sitePrefix(fx.site)}.tilstand/contracts/../../planted.json`];
    const store: SyncTarget = {
      description: 'an object store holding keys with `..`',
      put: (k, b, m) => inner.put(k, b, m),
      putPointer: (k, b) => inner.putPointer(k, b),
      list: async (p) => [...(await inner.list(p)), ...planted.filter((k) => k.startsWith(p)).map((key) => ({ key, size: 7 }))].sort((a, b) => (a.key < b.key ? -1 : 1)),
      get: async (k) => (planted.includes(k) ? Buffer.from('planted') : inner.get(k)),
      head: (k) => inner.head(k),
      remove: (k) => inner.remove(k),
      close: async () => {},
    };
    const into = tempDir('pulled');
    cleanup.push(into);
    const warehouse = join(into, 'warehouse');
    const contracts = join(into, 'data', 'contracts');
    await expect(mirrorSite(store, fx.site, warehouse, { contractsDir: contracts })).rejects.toThrow(/refused key .*segment '\.\.'/);
    const written = filesUnder(into);
    expect(written.filter((f) => !f.startsWith(join('warehouse', sitePrefix(fx.site))) && !f.startsWith(join('data', 'contracts') + '/'))).toEqual([]);
  });
});
