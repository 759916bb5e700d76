// A tag deleted on the site while its upload waited (HQ unreachable) is dropped, not sent
// (core/sync, tag-deleted-while-pending.test.ts), and `tilstand sync status` lists it. The site's
// own views carry it too: the sync view the floor UI's Sync screen and `tilstand status` read
// (`syncView`) names the table, the tag, when, and why as a kind the UIs word (not the engine's
// English), and `tilstand status` says it under its sync line — the analyst at HQ will look for
// the tag, and the operator sees on the site that it never went. No health problem. Before, the
// view left the field out: neither said a thing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncError } from '../sync/errors.ts';
import { EMPTY_SYNC_STATUS, type SyncStatus as EngineSyncStatus } from '../sync/engine.ts';
import { Outbox, openOutboxDb } from '../sync/outbox.ts';
import { drain, faultyTarget, healthSite, WINDOW } from '../sync/test-support/health-site.ts';
import { dataPaths } from './config.ts';
import { initDataDir } from './init.ts';
import { formatStatus, statusFromDirectory, syncView } from './status.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const WHY = 'dropped, not sent: tag baseline of stock was deleted on the site before it reached HQ';

describe('a tag dropped before it reached HQ, in the site’s sync view', () => {
  it('through the real engine: table, tag, when and kind in the view; a line under sync in `tilstand status`; still healthy', async () => {
    const line = { down: true };
    const s = healthSite('sitedrop', cleanup, {
      target: (inner) =>
        faultyTarget(inner, () => {
          if (line.down) throw new SyncError('Transport', 'connect ENETUNREACH');
        }),
    });
    const e = s.open();
    try {
      const stock = s.fx.table('stock');
      stock.createTag('baseline');
      s.clock.now += 2 * 60_000;
      await e.enqueueSnapshotSync();
      await drain(e); // HQ offline: the tag's upload waits
      expect(e.outbox.pendingUnits('tag:stock:')).toEqual(['tag:stock:baseline']);
      stock.deleteTag('baseline');
      s.clock.now += 2 * 60_000;
      await e.enqueueSnapshotSync(); // planning sees the tag gone: dropped
      line.down = false;
      await drain(e);

      const v = syncView('/mnt/hq', WINDOW, e.status());
      expect(v.healthy).toBe(true);
      expect(v.problems).toEqual([]);
      expect(v.dropped).toEqual([{ table: 'stock', tag: 'baseline', kind: 'deleted', atMs: s.clock.now, why: WHY }]);

      const lines = formatStatus({ ...emptyStatus(s.clock.now), sync: v });
      const at = lines.findIndex((l) => l.startsWith('sync: '));
      expect(lines[at]).toMatch(/^sync: to \/mnt\/hq, online, 0 steps pending, last success/);
      expect(lines[at + 1]).toBe(`  ${WHY} (at ${new Date(s.clock.now).toISOString()})`);
    } finally {
      await e.close();
    }
  }, 60_000);

  it('an engine that gives none (an older one), or nothing dropped: none in the view, no line', () => {
    const { dropped: _, ...old } = { ...EMPTY_SYNC_STATUS, dropped: [] } as EngineSyncStatus;
    for (const st of [old as EngineSyncStatus, { ...EMPTY_SYNC_STATUS, dropped: [] }]) {
      const v = syncView('/mnt/hq', WINDOW, st);
      expect(v.dropped).toEqual([]);
      expect(formatStatus({ ...emptyStatus(Date.UTC(2026, 11, 5)), sync: v }).some((l) => l.includes('not sent'))).toBe(false);
    }
  });

  it('a stopped site: `tilstand status` reads the drop from the outbox in site.db', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-view-dropped-'));
    cleanup.push(dir);
    const data = join(dir, 'data');
    await initDataDir({ data, site: 'demo', config: (c) => ({ ...c, hq: { target: join(dir, 'hq') } }) });
    const atMs = Date.now() - 60_000;
    const db = openOutboxDb(dataPaths(data).siteDb);
    try {
      // As core/sync's dropDeletedTag records it.
      new Outbox(db).noteDropped({ unit: 'tag:stock:baseline', why: WHY, atMs });
    } finally {
      db.close();
    }
    const st = statusFromDirectory(data);
    expect(st.sync?.dropped).toEqual([{ table: 'stock', tag: 'baseline', kind: 'deleted', atMs, why: WHY }]);
    expect(formatStatus(st)).toContain(`  ${WHY} (at ${new Date(atMs).toISOString()})`);
  }, 30_000);
});

/** A stopped site's status with nothing in it but what formatStatus needs. */
function emptyStatus(nowMs: number): Parameters<typeof formatStatus>[0] {
  return {
    site: 'demo', data: '/d', running: false, pid: null, startedAtMs: null, nowMs,
    broker: { mode: 'embedded', url: null, host: '127.0.0.1', port: null, metrics: null }, http: { url: null },
    tables: [], deadLettersOpen: 0,
    journal: { lastPosition: '0', committedPosition: '0', uncommittedEvents: '0', oldestUncommittedMs: null, bytesUsed: 0 },
    ingestFailure: null, diskFull: null, demo: null, streams: null, alarms: null, sync: null, restoreWaiting: null, proposals: null,
  };
}
