// Health through an outage when only snapshot units wait: a table that commits every minute has
// its pending snapshot unit superseded at each planning, and the newer unit must keep, for
// health, when HQ's copy of the table first fell behind — else the oldest pending step never
// ages past a minute and health reads healthy for an outage of hours. Time is a simulated clock:
// one commit, one planning and one run per simulated minute, a bounded number of them.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { statusOf, type SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { existingOutbox, openOutboxDb } from './outbox.ts';
import { drain, faultyTarget, healthSite, MINUTE, stockMinute as minute, statusFromOutbox, WINDOW } from './test-support/health-site.ts';
import { tempDir, writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/**
 * A site and a directory HQ behind a line the test controls: `down` refuses every request;
 * `refusePointer` lets files through and refuses the pointer writes it names (a send that got partway).
 */
function setup(id: string) {
  const line: { down: boolean; refusePointer?: (key: string) => boolean } = { down: false };
  const s = healthSite(id, cleanup, {
    target: (inner) =>
      faultyTarget(inner, (request, key) => {
        if (line.down) throw new SyncError('Transport', 'connect ENETUNREACH');
        if (request === 'putPointer' && line.refusePointer?.(key)) throw new SyncError('Transport', 'connection reset');
      }),
  });
  return { ...s, line };
}

const pendingUnits = (e: SyncEngine) => [...new Set(e.outbox.rows().filter((r) => r.state === 'pending').map((r) => r.unit))];

describe('health through an outage with only superseded snapshot units pending', () => {
  it('stalls a window after HQ first fell behind, though each minute supersedes the unit, and through a restart', async () => {
    const s = setup('60');
    let e = s.open();
    await e.enqueueSnapshotSync();
    await drain(e);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true });
    s.line.down = true;
    const behindMs = s.clock.now + MINUTE; // the first commit HQ does not get is planned then
    let stalledAt: number | undefined;
    for (let n = 0; n < 40 && stalledAt === undefined; n++) {
      if (n === 20) {
        // A restart mid-outage: the time HQ fell behind is in the outbox, not in the engine.
        await e.close();
        e = s.open();
      }
      const st = await minute(e, s.fx, s.clock, n);
      // Only the table's latest snapshot waits: each minute's unit superseded the one before.
      expect(pendingUnits(e), `minute ${n + 1}`).toEqual([`snapshot:stock:${s.fx.table('stock').latestSnapshot()!.id}`]);
      expect(st.oldestUnsyncedMs, `minute ${n + 1}`).toBe(s.clock.now - behindMs);
      if (s.clock.now - behindMs < WINDOW) expect(st.healthy, `minute ${n + 1}`).toBe(true);
      else if (!st.healthy) stalledAt = s.clock.now;
    }
    expect(stalledAt, 'stalled once HQ had been behind a whole window').toBe(behindMs + WINDOW);
    expect(e.status().recentItems).toBe(0);
    expect(e.status().lastError).toMatch(/ENETUNREACH/);
    expect(e.status().problems).toEqual(['waiting']);
    expect(statusFromOutbox(s.fx, s.clock.now)).toMatchObject({ healthy: false, problems: ['waiting'], oldestUnsyncedMs: WINDOW });
    // The line comes back: the latest unit goes, and health with it.
    s.line.down = false;
    const st = await minute(e, s.fx, s.clock, 40);
    expect(st).toMatchObject({ pendingItems: 0, healthy: true, oldestUnsyncedMs: 0 });
    // created_ms keeps its meaning (when the row was planned; compaction reads it): the time HQ
    // fell behind is a column of its own.
    const unit = `snapshot:stock:${s.fx.table('stock').latestSnapshot()!.id}`;
    const latest = e.outbox.rows().filter((r) => r.unit === unit);
    expect(latest.length).toBeGreaterThan(0);
    expect(latest.every((r) => r.created_ms === s.clock.now && r.behind_ms === behindMs)).toBe(true);
    await e.close();
  });

  it('a healthy line with a table committing every minute stays healthy, nothing carried', async () => {
    const s = setup('61');
    const e = s.open();
    await e.enqueueSnapshotSync();
    await drain(e);
    for (let n = 0; n < 30; n++) {
      const st = await minute(e, s.fx, s.clock, n);
      expect(st, `minute ${n + 1}`).toMatchObject({ pendingItems: 0, healthy: true, oldestUnsyncedMs: 0 });
      expect(st.recentItems).toBeGreaterThan(0);
    }
    expect(e.outbox.rows().every((r) => r.behind_ms === null)).toBe(true);
    await e.close();
  });

  it('a unit that sent its files but not its pointer, superseded: HQ is behind since the older was planned', async () => {
    const s = setup('62');
    const e = s.open();
    await e.enqueueSnapshotSync();
    await drain(e);
    s.line.refusePointer = (k) => k.includes('/snapshot/');
    await minute(e, s.fx, s.clock, 0);
    const olderMs = s.clock.now;
    const older = pendingUnits(e);
    expect(older).toHaveLength(1);
    // Its files went (done), its pointer waits.
    expect(e.outbox.rows().some((r) => r.unit === older[0] && r.op === 'put' && r.state === 'done' && r.sent_bytes > 0)).toBe(true);
    for (let n = 1; n <= 16; n++) await minute(e, s.fx, s.clock, n);
    const st = e.status();
    // Files of every newer unit went each minute (progress), so health holds by that rule; the
    // age says how long HQ's copy of stock has been behind.
    expect(st.recentItems).toBeGreaterThan(0);
    expect(st.oldestUnsyncedMs).toBe(s.clock.now - olderMs);
    expect(pendingUnits(e)).toEqual([`snapshot:stock:${s.fx.table('stock').latestSnapshot()!.id}`]);
    s.line.refusePointer = undefined;
    expect(await minute(e, s.fx, s.clock, 17)).toMatchObject({ pendingItems: 0, oldestUnsyncedMs: 0, healthy: true });
    await e.close();
  });

  it('a unit whose pointer reached HQ, superseded before its last steps: HQ had that state, nothing carried', async () => {
    const s = setup('63');
    const e = s.open();
    await e.enqueueSnapshotSync();
    await drain(e);
    s.clock.now += MINUTE;
    writeStock(s.fx, 30, 31, 2);
    await e.enqueueSnapshotSync();
    // The snapshot's pointer reaches HQ; its hints do not (the line drops there), and then it is down.
    s.line.refusePointer = (k) => /\/snapshot\/(EARLIEST|LATEST)$/.test(k);
    await drain(e);
    const unit = pendingUnits(e)[0]!;
    expect(pendingUnits(e)).toEqual([unit]);
    expect(e.outbox.rows().some((r) => r.unit === unit && r.op === 'pointer' && r.key!.endsWith(`snapshot-${unit.split(':')[2]}`) && r.state === 'done')).toBe(true);
    s.line.down = true;
    await minute(e, s.fx, s.clock, 1);
    const newer = pendingUnits(e);
    expect(newer).toHaveLength(1);
    expect(newer[0]).not.toBe(unit);
    expect(e.outbox.rows().filter((r) => r.unit === newer[0]).every((r) => r.behind_ms === null)).toBe(true);
    expect(e.status().oldestUnsyncedMs).toBe(0);
    await e.close();
  });

  it('a clock that stepped back mid-outage: the carried time is brought back to now, and stalls a window later', async () => {
    const s = setup('64');
    const HOUR = 60 * MINUTE;
    s.clock.now += 2 * HOUR; // booted two hours fast
    const e = s.open();
    await e.enqueueSnapshotSync();
    await drain(e);
    s.line.down = true;
    await minute(e, s.fx, s.clock, 0);
    await minute(e, s.fx, s.clock, 1); // supersedes: carries the fast clock's time
    expect(e.outbox.rows().some((r) => r.state === 'pending' && r.behind_ms !== null)).toBe(true);
    s.clock.now -= 2 * HOUR; // NTP
    await minute(e, s.fx, s.clock, 2);
    s.clock.now += WINDOW;
    const st = e.status();
    expect(st.oldestUnsyncedMs).toBeGreaterThanOrEqual(WINDOW);
    expect(st.healthy).toBe(false);
    await e.close();
  });

  it('an outbox from before behind_ms gains the column at open, its rows kept; a read-only status of it works', () => {
    const dir = tempDir('outbox');
    cleanup.push(dir);
    const path = join(dir, 'site.db');
    const old = new Database(path);
    // The schema as it was before the column (core/sync outbox.ts at that time).
    old.exec(`CREATE TABLE sync_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, unit TEXT NOT NULL, table_name TEXT, phase INTEGER NOT NULL,
      op TEXT NOT NULL CHECK (op IN ('put', 'pointer', 'prune', 'release', 'remove')), src TEXT, body BLOB, key TEXT, size INTEGER NOT NULL DEFAULT 0,
      sha256 TEXT, md5 TEXT, priority INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'cancelled')),
      attempts INTEGER NOT NULL DEFAULT 0, next_attempt_ms INTEGER NOT NULL DEFAULT 0, last_error TEXT, created_ms INTEGER NOT NULL, done_ms INTEGER,
      sent_bytes INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE sync_state (k TEXT PRIMARY KEY, v TEXT NOT NULL);
      INSERT INTO sync_outbox (unit, phase, op, key, size, priority, created_ms) VALUES ('snapshot:stock:3', 3, 'pointer', 'k', 1, 2, 1000);`);
    old.close();
    // `sync status` of a stopped site whose site.db an older version wrote: read-only, not migrated.
    const ro = openOutboxDb(path, true);
    expect(statusOf(existingOutbox(ro)!, 1000 + WINDOW, WINDOW)).toMatchObject({ pendingItems: 1, oldestUnsyncedMs: WINDOW, healthy: false });
    ro.close();
    const db = openOutboxDb(path);
    const o = existingOutbox(db)!;
    expect(o.rows()).toMatchObject([{ id: 1, unit: 'snapshot:stock:3', created_ms: 1000, behind_ms: null }]);
    expect(statusOf(o, 1000 + WINDOW - 1, WINDOW)).toMatchObject({ oldestUnsyncedMs: WINDOW - 1, healthy: true });
    db.close();
    // Opening again changes nothing.
    const again = openOutboxDb(path);
    expect((again.prepare(`SELECT COUNT(*) FROM pragma_table_info('sync_outbox') WHERE name = 'behind_ms'`).pluck().get() as number)).toBe(1);
    again.close();
  });
});
