// `tilstand restore --force` into a data directory whose outbox still has steps pending: the site
// committed a snapshot, its files reached HQ, its JSON did not (the line dropped). The restore
// replaces the tables with HQ's, but the outbox kept the step, with the old snapshot's JSON in its
// row: the restored site's first sync sent it, pointed HQ's hints at it and pruned HQ's snapshot,
// so HQ held the replaced tables' state (which a restore from it brings back) until the restored
// site committed again. The restore now drops the outbox's steps and record, as for a new target.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { restoreSite } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, tempDir, writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** HQ's folder, but a table's snapshot JSON does not get there (the line drops at it). */
class NoSnapshotJson extends DirectoryTarget {
  override async putPointer(key: string, bytes: Uint8Array): Promise<void> {
    if (/\/snapshot\/snapshot-\d+$/.test(key)) throw new SyncError('Transport', `putPointer ${key}: connection reset`);
    return super.putPointer(key, bytes);
  }
}

/** HQ's folder, noting each pointer written. */
class Noting extends DirectoryTarget {
  readonly pointers: string[] = [];
  override async putPointer(key: string, bytes: Uint8Array): Promise<void> {
    this.pointers.push(key);
    return super.putPointer(key, bytes);
  }
}

describe('restore --force over an outbox with steps pending', () => {
  it('sends none of the replaced tables\' steps: HQ keeps the restored state', async () => {
    const fx = makeSite('73', { rows: 50 });
    const hq = tempDir('hq');
    cleanup.push(fx.data, hq);
    const opts = { dataDir: fx.data, site: fx.site, scheduledTags: null, retry: { baseMs: 1, maxMs: 5, jitter: 0 } } as const;
    const first = new SyncEngine({ ...opts, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }) });
    await first.syncNow(5);
    await first.close();
    const stockAtHq = join(hq, 'site_73.db', 'stock', 'snapshot');
    const synced = fx.table('stock').latestSnapshot()!.id;
    expect(readdirSync(stockAtHq).sort()).toEqual(['EARLIEST', 'LATEST', `snapshot-${synced}`]);

    // The site commits; the snapshot's files reach HQ, its JSON does not.
    const unsent = writeStock(fx, 50, 80, 2);
    const cut = new SyncEngine({ ...opts, target: new NoSnapshotJson(hq, { writePrefix: sitePrefix(fx.site) }) });
    await cut.enqueueSnapshotSync();
    for (let i = 0; i < 3; i++) await cut.runOnce();
    expect(cut.status().pendingItems).toBeGreaterThan(0);
    await cut.close();
    expect(readdirSync(stockAtHq)).not.toContain(`snapshot-${unsent}`);

    const note = await restoreSite({ dataDir: fx.data, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), site: fx.site, force: true });
    expect(note.sender?.adopted).toBe(true);
    expect(fx.table('stock').latestSnapshot()!.id).toBe(synced);
    const restoredJson = readFileSync(join(stockAtHq, `snapshot-${synced}`));

    const noting = new Noting(hq, { writePrefix: sitePrefix(fx.site) });
    const after = new SyncEngine({ ...opts, target: noting });
    await after.syncNow(5);
    await after.close();
    expect(noting.pointers).not.toContain(`site_73.db/stock/snapshot/snapshot-${unsent}`);
    expect(readdirSync(stockAtHq).sort()).toEqual(['EARLIEST', 'LATEST', `snapshot-${synced}`]);
    expect(readFileSync(join(stockAtHq, `snapshot-${synced}`))).toEqual(restoredJson);
    expect(readFileSync(join(stockAtHq, 'LATEST'), 'utf8')).toBe(String(synced));

    // The restored site's next commit takes the id of the one replaced, and reaches HQ.
    const next = writeStock(fx, 50, 60, 2);
    expect(next).toBe(unsent);
    const later = new SyncEngine({ ...opts, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }) });
    await later.syncNow(5);
    await later.close();
    expect(readdirSync(stockAtHq).sort()).toEqual(['EARLIEST', 'LATEST', `snapshot-${next}`]);
    expect(readFileSync(join(stockAtHq, `snapshot-${next}`))).toEqual(readFileSync(join(fx.data, 'warehouse', 'site_73.db', 'stock', 'snapshot', `snapshot-${next}`)));
  }, 60_000);
});
