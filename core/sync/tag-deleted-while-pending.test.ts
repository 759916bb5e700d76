// A tag deleted on the site (by an operator, by its retention) while its upload still waits in the
// outbox (HQ unreachable). Its steps are ended, not sent: the rows say it was dropped and why, and
// `sync status` lists it; HQ gets neither the tag's JSON nor its files (the tag on a snapshot no
// longer latest); a tag of that name made later is sent as any new tag. Before, the waiting JSON
// went to HQ whenever its files were still on the site (a tag nobody wants, kept at HQ for good),
// and when expiration had swept some, the unit was cancelled after part of its files had gone and
// then counted as done: a tag of that name made later never reached HQ.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tagFromJson } from '../lsm/snapshot.ts';
import { syncStatusLines } from './cli/sync.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { drain, faultyTarget, healthSite, statusFromOutbox, type HealthSite } from './test-support/health-site.ts';
import { writeStock } from './test-support/site-fixture.ts';
import type { SyncEngine } from './engine.ts';
import type { SyncTarget } from './targets/target.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const MINUTE = 60_000;

function site(id: string): { s: HealthSite<SyncTarget>; line: { down: boolean }; puts: string[] } {
  const line = { down: true };
  const puts: string[] = [];
  const s = healthSite(id, cleanup, {
    target: (inner) =>
      faultyTarget(inner, (request, key) => {
        if (line.down) throw new SyncError('Transport', 'connect ENETUNREACH');
        if (request === 'put' || request === 'putPointer') puts.push(key);
      }),
  });
  return { s, line, puts };
}

async function round(s: HealthSite<SyncTarget>, e: SyncEngine): Promise<void> {
  s.clock.now += 2 * MINUTE;
  await e.enqueueSnapshotSync();
  await drain(e);
}

const hqTag = (s: HealthSite<SyncTarget>, table: string, tag: string) => join(s.inner.description.slice('dir:'.length), ...`${sitePrefix(s.fx.site)}${table}/tag/tag-${tag}`.split('/'));

describe('a tag deleted on the site while its upload waits', () => {
  it('is dropped with its reason, not sent; a tag of that name made later goes as a new one', async () => {
    const { s, line, puts } = site('tdw1');
    const e = s.open();
    try {
      const stock = s.fx.table('stock');
      stock.createTag('baseline');
      const tagSnapshot = stock.tags.get('baseline').snapshot.id;
      await round(s, e); // HQ unreachable: the tag's steps wait
      expect(e.outbox.pendingUnits('tag:stock:')).toEqual(['tag:stock:baseline']);
      // Overwritten, a planning between (the hold tag moves on), the tag deleted, expired: its files are swept.
      writeStock(s.fx, 0, 30, 3);
      await round(s, e);
      stock.deleteTag('baseline');
      for (let i = 0; i < 4; i++) writeStock(s.fx, 0, 30, 4 + i);
      const w = stock.newWriter();
      w.expire();
      w.close();
      line.down = false;
      await round(s, e);
      await round(s, e);
      // Nothing of the tag went: no JSON, no file only its snapshot had.
      expect(existsSync(hqTag(s, 'stock', 'baseline'))).toBe(false);
      expect(puts.filter((k) => k.includes('/tag/'))).toEqual([]);
      const rows = e.outbox.rows().filter((r) => r.unit === 'tag:stock:baseline');
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r.state).toBe('cancelled');
        expect(r.last_error).toBe('dropped, not sent: tag baseline of stock was deleted on the site before it reached HQ');
      }
      const st = statusFromOutbox(s.fx, s.clock.now);
      expect(st.pendingItems).toBe(0);
      expect(st.healthy).toBe(true);
      expect(st.dropped?.map((d) => d.unit)).toEqual(['tag:stock:baseline']);
      expect(syncStatusLines(st).filter((l) => l.startsWith('dropped:'))).toEqual([
        `dropped:          tag:stock:baseline at ${new Date(st.dropped![0]!.atMs).toISOString()}: dropped, not sent: tag baseline of stock was deleted on the site before it reached HQ`,
      ]);
      // Made again on today's state: it reaches HQ as any new tag.
      stock.createTag('baseline');
      const now = stock.tags.get('baseline').snapshot.id;
      expect(now).not.toBe(tagSnapshot);
      await round(s, e);
      await round(s, e);
      expect(e.status().pendingItems).toBe(0);
      const at = hqTag(s, 'stock', 'baseline');
      expect(tagFromJson(readFileSync(at, 'utf8'), at).snapshot.id).toBe(now);
    } finally {
      await e.close();
    }
  }, 60_000);

  it('deleted with no planning before the line is back: the sender drops it', async () => {
    const { s, line } = site('tdw2');
    const e = s.open();
    try {
      const stock = s.fx.table('stock');
      stock.createTag('before-count');
      await round(s, e);
      stock.deleteTag('before-count');
      line.down = false;
      // No planning between the deletion and the run: the sender itself notices.
      s.clock.now += 2 * MINUTE;
      await drain(e);
      expect(existsSync(hqTag(s, 'stock', 'before-count'))).toBe(false);
      expect(e.status().pendingItems).toBe(0);
      expect(e.status().dropped?.map((d) => d.unit)).toEqual(['tag:stock:before-count']);
      expect(e.outbox.unitState('tag:stock:before-count')).toBeUndefined();
    } finally {
      await e.close();
    }
  }, 60_000);

  it('deleted while its files are on their way: the rest is dropped, and a tag of that name made later is sent', async () => {
    const { s, line } = site('tdw4');
    line.down = false;
    const stock = s.fx.table('stock');
    let deleteAtFirstPut = true;
    const e = s.open();
    const inner = s.target.put;
    s.target.put = async (k, b, m) => {
      await inner(k, b, m);
      if (deleteAtFirstPut && k.includes('/stock/')) {
        deleteAtFirstPut = false;
        stock.deleteTag('audit');
      }
    };
    try {
      stock.createTag('audit');
      await round(s, e);
      const rows = e.outbox.rows().filter((r) => r.unit === 'tag:stock:audit');
      expect(rows.filter((r) => r.state === 'done').length).toBe(1);
      expect(rows.filter((r) => r.state === 'cancelled').length).toBe(rows.length - 1);
      expect(existsSync(hqTag(s, 'stock', 'audit'))).toBe(false);
      await round(s, e); // a planning without the tag: what the engine knew of it in memory goes
      writeStock(s.fx, 0, 30, 3);
      stock.createTag('audit');
      const now = stock.tags.get('audit').snapshot.id;
      await round(s, e);
      await round(s, e);
      const at = hqTag(s, 'stock', 'audit');
      expect(existsSync(at) && tagFromJson(readFileSync(at, 'utf8'), at).snapshot.id).toBe(now);
    } finally {
      await e.close();
    }
  }, 60_000);

  it('a tag HQ deleted while the site keeps it is no drop', async () => {
    const { s, line } = site('tdw3');
    line.down = false;
    const e = s.open();
    try {
      s.fx.table('stock').createTag('kept');
      await round(s, e);
      expect(existsSync(hqTag(s, 'stock', 'kept'))).toBe(true);
      rmSync(hqTag(s, 'stock', 'kept'));
      await round(s, e);
      expect(e.status().dropped).toEqual([]);
      expect(e.outbox.unitState('tag:stock:kept')).toBe('done');
    } finally {
      await e.close();
    }
  }, 60_000);
});
