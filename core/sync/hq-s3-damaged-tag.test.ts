// The `hq` commands over S3 read a table through a local copy (hq/store.ts, the mirror). One old
// tag torn at HQ (a damaged tag JSON) failed that copy, and with it every command on the table:
// `hq scan` of the latest snapshot, `hq export`, a scan at another tag — exit 4 with nothing,
// where the same commands on a directory HQ read what they need and only those that read the
// damaged tag fail. Now the copy leaves the damaged tag out and says so on stderr, the command goes
// on, and it exits as on a directory HQ: 0 when it needs no list of the tags nor that tag, 4 when
// it does (`hq tags` prints the others first; a scan at that tag is "damaged", not "no tag").
// Runs the same commands against a directory HQ and an S3 HQ (s3rver on 127.0.0.1) holding the
// same damaged tag.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../lsm/testing/cli.ts';
import { runHq } from './cli/hq.ts';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { S3Target } from './targets/s3.ts';
import { makeSite, startS3, tempDir, writeStock, type S3Fixture } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
let s3: S3Fixture;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const creds = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

describe('hq commands over S3 with a damaged old tag at HQ', () => {
  it('read the rest, name the damaged tag on stderr, and exit as on a directory HQ', async () => {
    const fx = makeSite('s3dt', { rows: 5 });
    cleanup.push(fx.data);
    fx.table('stock').createTag('old');
    writeStock(fx, 5, 10, 2);
    fx.table('stock').createTag('recent');
    const key = `${sitePrefix('s3dt')}stock/tag/tag-old`;
    const oldTag = fx.table('stock').listTags().find((x) => x.name === 'old')!.snapshot;
    const [oldAt, oldId] = [oldTag.timeMillis, oldTag.id];

    // The same site at a directory HQ and at S3, the same tag torn at both.
    const hqDir = tempDir('hq');
    cleanup.push(hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const good = readFileSync(join(hqDir, ...key.split('/')));
    const torn = good.subarray(0, Math.floor(good.length / 2));
    writeFileSync(join(hqDir, ...key.split('/')), torn);
    const target = new S3Target({ bucket: s3.bucket, root: '', endpoint: s3.endpoint, ...creds, writePrefix: sitePrefix('s3dt') });
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target, retry: { baseMs: 5, maxMs: 50 }, scheduledTags: null });
    try {
      await e.enqueueSnapshotSync();
      for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) await e.runOnce();
      expect(e.status().pendingItems).toBe(0);
      await target.putPointer(key, torn);
    } finally {
      await e.close();
    }

    const s3Hq = `s3://${s3.bucket}?endpoint=${s3.endpoint}`;
    const cache = tempDir('cache');
    const out = tempDir('out');
    cleanup.push(cache, out);
    const env = { ...process.env };
    Object.assign(process.env, { TILSTAND_HQ_ACCESS_KEY: 'S3RVER', TILSTAND_HQ_SECRET_KEY: 'S3RVER' });
    try {
      const commands: [string, string[], number][] = [
        ['scan latest', ['scan', '--site', 's3dt', '--table', 'stock'], 0],
        ['scan at another tag', ['scan', '--site', 's3dt', '--table', 'stock', '--tag', 'recent'], 0],
        ['export', ['export', '--site', 's3dt', '--table', 'stock', '--format', 'csv', '--out', join(out, 'OUT.csv')], 0],
        ['tags', ['tags', '--site', 's3dt', '--table', 'stock'], 4],
        ['scan at the damaged tag', ['scan', '--site', 's3dt', '--table', 'stock', '--tag', 'old'], 4],
        // Found among the tags: the list lacks one, which may be the state asked for.
        ['scan at a time before the latest', ['scan', '--site', 's3dt', '--table', 'stock', '--at', new Date(oldAt).toISOString()], 4],
        ['scan at a tagged snapshot', ['scan', '--site', 's3dt', '--table', 'stock', '--snapshot', String(oldId)], 4],
        ['diff from the damaged tag', ['diff', '--site', 's3dt', '--table', 'stock', '--from', 'old'], 4],
        ['pull', ['pull', '--site', 's3dt', '--out', join(out, 'OUT')], 4],
      ];
      for (const [what, argv, code] of commands) {
        const at = (hq: string, kind: string) => argv.map((a) => a.replace('OUT', `${kind}-${what.replace(/ /g, '-')}`)).concat(['--hq', hq]);
        const dir = await runCli(runHq, at(hqDir, 'dir'));
        const s3r = await runCli(runHq, [...at(s3Hq, 's3'), '--cache', cache]);
        expect(dir.code, `${what} (directory HQ): ${dir.err}`).toBe(code);
        expect(s3r.code, `${what} (S3 HQ): ${s3r.err}`).toBe(code);
        // What a command reads without the damaged tag is what the directory HQ gives.
        if (code === 0) expect(s3r.out.replace(/s3-/g, 'dir-'), what).toBe(dir.out);
        // Never left out silently: the damaged tag is named, as corruption, with HQ's key.
        expect(s3r.err, what).toContain(key);
        expect(s3r.err, what).toMatch(/damaged/);
        if (code === 4 && what !== 'pull') expect(s3r.err, what).toMatch(/corruption in /);
      }
      // `hq tags` lists the tags that read, then names the damaged one.
      const tags = await runCli(runHq, ['tags', '--site', 's3dt', '--table', 'stock', '--hq', s3Hq, '--cache', cache]);
      expect(tags.out).toMatch(/^recent /m);
      expect(tags.out).not.toMatch(/^old /m);
      // Mended at HQ, the tag reads again through the same cache.
      await new S3Target({ bucket: s3.bucket, root: '', endpoint: s3.endpoint, ...creds, writePrefix: sitePrefix('s3dt') }).putPointer(key, good);
      const mended = await runCli(runHq, ['scan', '--site', 's3dt', '--table', 'stock', '--tag', 'old', '--hq', s3Hq, '--cache', cache]);
      expect([mended.code, mended.err]).toEqual([0, '']);
      expect(mended.out.trim().split('\n')).toHaveLength(fx.table('stock').scanRows({ tag: 'old' }).length);
    } finally {
      for (const k of ['TILSTAND_HQ_ACCESS_KEY', 'TILSTAND_HQ_SECRET_KEY']) {
        if (env[k] === undefined) delete process.env[k];
        else process.env[k] = env[k];
      }
    }
  }, 60_000);
});
