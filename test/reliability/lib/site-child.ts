// Child process of crash.test.ts and soak.test.ts: a whole site (Site.start: journal, embedded
// broker with durable PUBACK, Ingestor with its commits, compaction and expiration, journal prune,
// HTTP server, control socket) on a data directory with ephemeral ports, plus what a running site
// also does besides ingest: tags created every `tagEveryMs` (with a short retention, so expiration
// deletes them again) and a SyncEngine shipping tags and snapshots to a directory "HQ", which
// forgets its finished steps after a second (`outboxKeepMs`), so its outbox compaction and its
// record of what HQ holds run all the time under the kills.
//
// argv: <data dir> <hq dir> [tagEveryMs] [syncEveryMs]
// stdout: `ready <mqttUrl> <httpUrl>` once listening; `stats <json>` every 100 ms (activity
// counters, so the parent can say what was going on when it killed us); `stopped` after `stop`.
// stdin: `stop` → clean shutdown (sync stopped, site stopped), exit 0.

import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { Catalog } from '../../../core/lsm/index.ts';
import { Site } from '../../../core/site/site.ts';
import { SyncEngine } from '../../../core/sync/engine.ts';
import { DirectoryTarget } from '../../../core/sync/targets/directory.ts';
import { sitePrefix } from '../../../core/sync/names.ts';

const [data, hq, tagEvery = '200', syncEvery = '150'] = process.argv.slice(2) as [string, string, string?, string?];
const log = (l: string) => process.stderr.write(`${l}\n`);

const site = await Site.start({ data, mqttPort: 0, httpPort: 0, tickMs: 40, log });
const database = `site_${site.config.site}`;
const catalog = new Catalog(join(data, 'warehouse'));
const tables = catalog.listTables(database);
let tagsCreated = 0;
let tagErrors = 0;
let n = 0;
const tagTimer = setInterval(() => {
  for (const t of ['stock', 'work_queue']) {
    try {
      const table = catalog.getTable({ database, table: t });
      if (!table.latestSnapshot()) continue;
      table.createTag(`rel-${process.pid}-${n++}`, undefined, 1500);
      tagsCreated++;
    } catch (e) {
      tagErrors++;
      if (tagErrors < 5) log(`tag: ${(e as Error).message}`);
    }
  }
}, Number(tagEvery));

const sync = hq === '-' ? undefined : new SyncEngine({ dataDir: data, site: site.config.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(site.config.site) }), retry: { baseMs: 20, maxMs: 300, jitter: 0.5 }, scheduledTags: null, outboxKeepMs: 1_000, log });
sync?.start(Number(syncEvery));

process.stdout.write(`ready ${site.mqttUrl} ${site.httpUrl}\n`);

const files = (dir: string): number => {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
};
const statsTimer = setInterval(() => {
  const st = site.status();
  const s = sync?.status();
  const earliest: Record<string, number | null> = {};
  const kinds: Record<string, string | null> = {};
  for (const t of tables) {
    try {
      const table = catalog.getTable({ database, table: t });
      earliest[t] = table.snapshots.earliestId() ?? null;
      kinds[t] = table.latestSnapshot()?.commitKind ?? null;
    } catch {
      earliest[t] = null;
    }
  }
  const out = {
    journal: Number(st.journal.lastPosition ?? 0),
    snapshots: Object.fromEntries(st.tables.map((t) => [t.table, t.snapshotId ?? 0])),
    earliest,
    kinds,
    tags: tagsCreated,
    stockTagFiles: files(join(data, 'warehouse', `${database}.db`, 'stock', 'tag')),
    syncDone: s ? s.recentItems : 0,
    syncPending: s ? s.pendingItems : 0,
    rss: process.memoryUsage().rss,
    fds: files('/proc/self/fd'),
    ingestFailure: st.ingestFailure,
    broker: st.broker.mode === "embedded" ? st.broker.metrics : null,
  };
  process.stdout.write(`stats ${JSON.stringify(out)}\n`);
}, 100);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'stop') return;
  clearInterval(tagTimer);
  clearInterval(statsTimer);
  void (async () => {
    await sync?.close();
    await site.stop();
    process.stdout.write('stopped\n', () => process.exit(0));
  })();
});
