// Test support: send a site's tables to a directory HQ through the real engine, bounded (50
// rounds), and fail when anything is left pending. Not imported by production code.

import { SyncEngine } from '../engine.ts';
import { sitePrefix } from '../names.ts';
import { DirectoryTarget } from '../targets/directory.ts';

export async function shipToDirectory(data: string, site: string, hqDir: string): Promise<void> {
  const e = new SyncEngine({ dataDir: data, site, target: new DirectoryTarget(hqDir, { writePrefix: sitePrefix(site) }), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null });
  try {
    await e.enqueueSnapshotSync();
    for (let i = 0; i < 50 && e.status().pendingItems > 0; i++) {
      await e.runOnce();
      if (e.status().pendingItems > 0) await new Promise((r) => setTimeout(r, 10));
    }
    const left = e.status();
    if (left.pendingItems > 0) throw new Error(`${left.pendingItems} sync steps left pending after 50 rounds: ${left.lastError}`);
  } finally {
    await e.close();
  }
}
