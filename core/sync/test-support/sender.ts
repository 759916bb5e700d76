// Child process for the kill -9 test: runs the SyncEngine of a site against an S3 endpoint until
// nothing is pending. Prints `progress <bytes>` lines and `done` at the end.
// argv: <data dir> <site> <endpoint> <bucket> <bandwidth bytes/s>
import { SyncEngine } from '../engine.ts';
import { S3Target } from '../targets/s3.ts';
import { sitePrefix } from '../names.ts';

const [data, site, endpoint, bucket, bw] = process.argv.slice(2) as [string, string, string, string, string];
const target = new S3Target({ bucket, endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: sitePrefix(site) });
const engine = new SyncEngine({ dataDir: data, site, target, bandwidthBytesPerSecond: Number(bw), retry: { baseMs: 20, maxMs: 200 }, scheduledTags: null });
await engine.enqueueSnapshotSync();
console.log('started');
const timer = setInterval(() => {
  const c = engine.status().current;
  if (c) console.log(`progress ${c.file} ${c.bytes}`);
}, 50);
for (let i = 0; i < 200 && engine.status().pendingItems > 0; i++) {
  await engine.runOnce();
  if (engine.status().pendingItems > 0) await new Promise((r) => setTimeout(r, 50));
}
clearInterval(timer);
console.log(engine.status().pendingItems === 0 ? 'done' : 'incomplete');
await engine.close();
await target.close();
