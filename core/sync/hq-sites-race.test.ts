// `tilstand hq sites` while a site syncs: HQ keeps one snapshot JSON per table, and each sync puts
// the new one and then removes (prunes) the one before. `HqStore.siteStates` lists HQ and then
// reads each table's newest snapshot JSON; one pruned between the two failed the whole command
// ("get …/snapshot/snapshot-N: not found", exit 1) for every site, on an HQ whose sites sync every
// minute. The mirror already takes a pointer gone since its listing in its stride.

import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { HqStore } from './hq/store.ts';
import { DirectoryTarget } from './targets/directory.ts';
import type { ObjectInfo, SyncTarget } from './targets/target.ts';
import { makeSite, tempDir, writeStock } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('hq sites while a site syncs', () => {
  it('a snapshot JSON pruned between the listing and its read: the newer one is read, no failure', async () => {
    const fx = makeSite('72', { rows: 20 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const dir = new DirectoryTarget(hqDir);
    let synced = false;
    // The site's next sync lands right after HQ was listed: snapshot N+1 put, snapshot N removed.
    const racing: SyncTarget = {
      description: dir.description,
      put: (k, b, m) => dir.put(k, b, m),
      putPointer: (k, b) => dir.putPointer(k, b),
      get: (k) => dir.get(k),
      head: (k) => dir.head(k),
      remove: (k) => dir.remove(k),
      close: () => dir.close(),
      list: async (prefix: string): Promise<ObjectInfo[]> => {
        const listed = await dir.list(prefix);
        if (prefix === '' && !synced) {
          synced = true;
          writeStock(fx, 20, 40, 2);
          await shipToDirectory(fx.data, fx.site, hqDir);
        }
        return listed;
      },
    };
    const states = await new HqStore(racing).siteStates();
    expect(synced).toBe(true);
    expect(states).toHaveLength(1);
    expect(states[0]).toMatchObject({ site: '72', tables: 3 });
    // The newest commit HQ holds now: stock's, committed last.
    expect(states[0]!.stateAsOfMs).toBe(fx.table('stock').latestSnapshot()!.timeMillis);
  }, 60_000);
});
