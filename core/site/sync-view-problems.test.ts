// The site's sync view (`syncView`, the SyncStatus the floor UI and `tilstand status` get) carries
// why sync is not healthy — core/sync's `problems`, most pressing first — so the UI's Sync screen
// and header read it from the view itself, not from whichever alarm happens to be in the status.
// A view that says healthy carries none (a site waiting for the sender lock reports the outbox's
// problems as healthy: another process sends).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY_SYNC_STATUS, type SyncStatus as EngineSyncStatus } from '../sync/engine.ts';
import { Outbox, openOutboxDb } from '../sync/outbox.ts';
import { SENDER_CONFLICT } from '../sync/sender.ts';
import { dataPaths } from './config.ts';
import { initDataDir } from './init.ts';
import { formatStatus, statusFromDirectory, syncView } from './status.ts';

const WINDOW = 15 * 60_000;
const engine = (over: Partial<EngineSyncStatus>): EngineSyncStatus => ({ ...EMPTY_SYNC_STATUS, ...over });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('syncView: problems', () => {
  it('passes the engine’s problems through while unhealthy, in its order', () => {
    const v = syncView('/mnt/hq', WINDOW, engine({ healthy: false, pendingItems: 2, problems: ['refused', 'waiting'] }));
    expect(v.problems).toEqual(['refused', 'waiting']);
    expect(v.healthy).toBe(false);
  });

  it('none while healthy, whatever the outbox says (a site waiting for the sender lock)', () => {
    expect(syncView('/mnt/hq', WINDOW, engine({ healthy: true, problems: ['refused'] })).problems).toEqual([]);
  });

  it('none from an older engine that gives no problems (the UIs say "not healthy" alone)', () => {
    const { problems: _, ...old } = engine({ healthy: false, pendingItems: 1 });
    expect(syncView('/mnt/hq', WINDOW, old as EngineSyncStatus).problems).toEqual([]);
  });
});

describe('tilstand status of a directory HQ refuses', () => {
  it('the view says refused, and the status line says why beside STALLED', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-view-problems-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    await initDataDir({ data, site: 'demo', config: (c) => ({ ...c, hq: { target: hq } }) });
    // What the engine records when HQ's sender marker names another data directory (core/sync sender.ts).
    const db = openOutboxDb(dataPaths(data).siteDb);
    try {
      new Outbox(db).setState(SENDER_CONFLICT, JSON.stringify({ sinceMs: Date.UTC(2026, 11, 1), message: "HQ's site_demo.db/ belongs to another sender: other-pc" }));
    } finally {
      db.close();
    }
    const st = statusFromDirectory(data);
    expect(st.sync).toMatchObject({ healthy: false, problems: ['refused'] });
    const line = formatStatus(st).find((l) => l.startsWith('sync: '));
    expect(line).toContain('STALLED (HQ refuses this PC: another PC sends for this site, docs/operations.md "Two PCs for one site")');
    expect(line).toContain('last error: HQ\'s site_demo.db/ belongs to another sender: other-pc');
  }, 30_000);

  it('a problem this site does not word (a newer engine) is named as it came; healthy says nothing', () => {
    const base = emptyStatus();
    const newer = formatStatus({ ...base, sync: { ...syncView('/mnt/hq', WINDOW, engine({ healthy: false })), problems: ['quota', 'waiting'] } });
    expect(newer.find((l) => l.startsWith('sync: '))).toContain('STALLED (quota; nothing reached HQ within the health window)');
    const healthy = formatStatus({ ...base, sync: syncView('/mnt/hq', WINDOW, engine({ healthy: true })) });
    expect(healthy.find((l) => l.startsWith('sync: '))).toMatch(/^sync: to \/mnt\/hq, OFFLINE, 0 steps pending/);
  });
});

/** A stopped site's status with nothing in it but what formatStatus needs. */
function emptyStatus(): Parameters<typeof formatStatus>[0] {
  return {
    site: 'demo', data: '/d', running: false, pid: null, startedAtMs: null, nowMs: Date.UTC(2026, 11, 1),
    broker: { mode: 'embedded', url: null, host: '127.0.0.1', port: null, metrics: null }, http: { url: null },
    tables: [], deadLettersOpen: 0,
    journal: { lastPosition: '0', committedPosition: '0', uncommittedEvents: '0', oldestUncommittedMs: null, bytesUsed: 0 },
    ingestFailure: null, diskFull: null, demo: null, streams: null, alarms: null, sync: null, restoreWaiting: null, proposals: null,
  };
}
