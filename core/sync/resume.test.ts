// Resuming after a crash in the middle of planning: a newer snapshot's steps and the cancelling of
// the older one it supersedes are one transaction, so HQ never goes back to the older snapshot.
// And a restore holds the data directory's sender lock: it never replaces tables under a sender.

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { restoreSite } from './restore.ts';
import { sitePrefix } from './names.ts';
import { DirectoryTarget } from './targets/directory.ts';
import type { SyncTarget } from './targets/target.ts';
import { makeSite, tempDir, writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('resuming planning', () => {
  it('a crash between planning a newer snapshot and cancelling the older one: after the restart only the newer one goes, and HQ ends on it', async () => {
    const fx = makeSite('60', { rows: 40 });
    const hq = tempDir('hq');
    cleanup.push(fx.data, hq);
    const inner = new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) });
    const line = { up: false, failPointerOnce: '' };
    const check = () => {
      if (!line.up) throw new SyncError('Transport', 'connect ENETUNREACH');
    };
    const target: SyncTarget = {
      description: inner.description,
      put: async (k, b, m) => (check(), inner.put(k, b, m)),
      putPointer: async (k, b) => {
        check();
        // The older snapshot's JSON meets a dropped connection once: its retry comes after the newer unit.
        if (k === line.failPointerOnce) {
          line.failPointerOnce = '';
          throw new SyncError('Transport', 'socket hang up');
        }
        return inner.putPointer(k, b);
      },
      list: async (p) => (check(), inner.list(p)),
      get: async (k) => (check(), inner.get(k)),
      head: async (k) => (check(), inner.head(k)),
      remove: async (k) => (check(), inner.remove(k)),
      close: async () => {},
    };
    let now = Date.UTC(2026, 11, 1, 9);
    const open = () => new SyncEngine({ dataDir: fx.data, site: fx.site, target, clock: () => now, random: () => 0, retry: { baseMs: 1000, maxMs: 60_000, jitter: 0 }, scheduledTags: null });
    let e = open();
    const first = fx.table('stock').latestSnapshot()!.id;
    await e.enqueueSnapshotSync();
    await e.runOnce(); // HQ unreachable: snapshot `first` waits
    const second = writeStock(fx, 40, 50, 2);
    // The process dies after the newer snapshot's steps are written, before the older unit is cancelled.
    const cancel = e.outbox.cancelUnit.bind(e.outbox);
    e.outbox.cancelUnit = (unit, why) => {
      if (why.startsWith('superseded')) throw new Error('killed');
      return cancel(unit, why);
    };
    await e.enqueueSnapshotSync();
    await e.close();

    e = open();
    now += 60_000;
    await e.enqueueSnapshotSync();
    expect(e.outbox.pendingUnits('snapshot:stock:')).toEqual([`snapshot:stock:${second}`]);

    line.up = true;
    line.failPointerOnce = `${sitePrefix(fx.site)}stock/snapshot/snapshot-${first}`;
    for (let i = 0; i < 10 && e.status().pendingItems > 0; i++) {
      await e.runOnce();
      now += 60_000;
    }
    expect(e.status().pendingItems).toBe(0);
    const snapshots = join(hq, sitePrefix(fx.site), 'stock', 'snapshot');
    expect(readFileSync(join(snapshots, 'LATEST'), 'utf8')).toBe(String(second));
    expect(readdirSync(snapshots).sort()).toEqual(['EARLIEST', 'LATEST', `snapshot-${second}`]);
    expect(fx.table('stock').listTags().map((t) => t.name)).toEqual([]); // both hold tags released
    await e.close();
  });
});

describe('restore beside a sender', () => {
  it('a restore is refused while an engine syncs from the data directory, and an engine while a restore runs', async () => {
    const fx = makeSite('62', { rows: 20 });
    const hq = tempDir('hq');
    cleanup.push(fx.data, hq);
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), scheduledTags: null });
    await e.syncNow(5);
    await expect(restoreSite({ dataDir: fx.data, target: new DirectoryTarget(hq), site: fx.site, force: true })).rejects.toThrow(/already has a writer in this process; a restore replaces the tables a syncing site reads/);
    expect(fx.table('stock').latestSnapshot()).toBeDefined(); // its tables were left alone
    await e.close();

    // While a restore runs (here: while it reads HQ), no engine starts on the directory.
    let during: unknown;
    const target = new DirectoryTarget(hq);
    const list = target.list.bind(target);
    target.list = async (prefix: string) => {
      if (during === undefined) {
        try {
          new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), scheduledTags: null });
          during = 'started';
        } catch (err) {
          during = err;
        }
      }
      return list(prefix);
    };
    await restoreSite({ dataDir: fx.data, target, site: fx.site, force: true });
    expect(String(during)).toMatch(/already has a writer in this process/);
    const again = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), scheduledTags: null });
    await again.close(); // released after the restore
  });
});
