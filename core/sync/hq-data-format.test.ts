// HQ's data format mark (hq-data-format.ts, DESIGN.md "HQ's data format mark"): the site's sync
// writes `site_<id>.db/.tilstand/data-format.json` with its program's data format before its first
// step, and `restore` reads it first and refuses, before writing anything, an HQ that requires a
// program newer than itself. Before, HQ held no mark: an older program restored what a newer one
// had sent, into a directory it then misread.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../lsm/testing/cli.ts';
import { runRestore } from './cli/sync.ts';
import { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { hqDataFormatKey, type ProgramDataFormat } from './hq-data-format.ts';
import { senderMarkerKey, sitePrefix } from './names.ts';
import { restoreSite } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { S3Target } from './targets/s3.ts';
import type { ObjectInfo, PutBody, PutMeta, SyncTarget } from './targets/target.ts';
import { makeSite, startS3, tempDir, writeStock, type S3Fixture } from './test-support/site-fixture.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const temp = (tag: string) => {
  const d = tempDir(tag);
  dirs.push(d);
  return d;
};

const V1: ProgramDataFormat = { written: 1, requires: 1, by: 'tilstand 1.0.0' };
const V2: ProgramDataFormat = { written: 2, requires: 2, by: 'tilstand 2.0.0' };

/** Every request a target gets, in order (`get:`, `put:`, `pointer:`, …), and a way to fail one kind of request. */
class Recording implements SyncTarget {
  readonly ops: string[] = [];
  failPointer: ((key: string) => boolean) | undefined;
  constructor(readonly inner: SyncTarget) {}
  get description() {
    return this.inner.description;
  }
  put(key: string, body: PutBody, meta: PutMeta) {
    this.ops.push(`put:${key}`);
    return this.inner.put(key, body, meta);
  }
  async putPointer(key: string, bytes: Uint8Array) {
    this.ops.push(`pointer:${key}`);
    if (this.failPointer?.(key)) throw new SyncError('Transport', `put ${key}: connection reset (test)`);
    return this.inner.putPointer(key, bytes);
  }
  list(prefix: string): Promise<ObjectInfo[]> {
    this.ops.push(`list:${prefix}`);
    return this.inner.list(prefix);
  }
  get(key: string) {
    this.ops.push(`get:${key}`);
    return this.inner.get(key);
  }
  head(key: string) {
    this.ops.push(`head:${key}`);
    return this.inner.head(key);
  }
  remove(key: string) {
    this.ops.push(`remove:${key}`);
    return this.inner.remove(key);
  }
  close() {
    return this.inner.close();
  }
}

const markPath = (hq: string, site: string) => join(hq, ...hqDataFormatKey(site).split('/'));
const markAt = (hq: string, site: string) => {
  const j = JSON.parse(readFileSync(markPath(hq, site), 'utf8')) as Record<string, unknown>;
  return { written: j.written, requires: j.requires, by: j.by };
};
const dirTarget = (hq: string, site: string) => new DirectoryTarget(hq, { writePrefix: sitePrefix(site) });

async function syncWith(data: string, site: string, target: SyncTarget, dataFormat?: ProgramDataFormat, log?: (l: string) => void) {
  const e = new SyncEngine({ dataDir: data, site, target, scheduledTags: null, retry: { baseMs: 10, maxMs: 50, jitter: 0 }, ...(dataFormat ? { dataFormat } : {}), ...(log ? { log } : {}) });
  try {
    return await e.syncNow(5);
  } finally {
    await e.close();
  }
}

describe("the site's sync writes HQ's data format mark (directory target)", () => {
  it('before its first step, beside the sender marker; read once per engine, written only when raised', async () => {
    const fx = makeSite('81', { rows: 50 });
    dirs.push(fx.data);
    const hq = temp('hq');
    const rec = new Recording(dirTarget(hq, fx.site));
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: rec, scheduledTags: null, dataFormat: V1 });
    try {
      const r = await e.syncNow(5);
      expect(r.status.pendingItems).toBe(0);
      expect(markAt(hq, fx.site)).toEqual({ written: 1, requires: 1, by: 'tilstand 1.0.0' });
      const key = hqDataFormatKey(fx.site);
      expect(key).toBe('site_81.db/.tilstand/data-format.json');
      // Written before the first step, after the sender check (planning's HEADs come before): the
      // first write at HQ but the sender marker.
      const writes = rec.ops.filter((o) => (o.startsWith('put:') || o.startsWith('pointer:')) && o !== `pointer:${senderMarkerKey(fx.site)}`);
      expect(writes[0]).toBe(`pointer:${key}`);
      expect(rec.ops.indexOf(`pointer:${key}`)).toBeGreaterThan(rec.ops.lastIndexOf(`get:${senderMarkerKey(fx.site)}`, rec.ops.indexOf(`pointer:${key}`)));
      // Another commit, another round: no further request for the mark (no GET per round).
      writeStock(fx, 50, 80, 2);
      expect((await e.syncNow(5)).status.pendingItems).toBe(0);
      expect(rec.ops.filter((o) => o.endsWith(key))).toEqual([`get:${key}`, `pointer:${key}`]);
    } finally {
      await e.close();
    }
    // A new session of the same program: one GET, nothing written.
    writeStock(fx, 80, 90, 3);
    const again = new Recording(dirTarget(hq, fx.site));
    await syncWith(fx.data, fx.site, again, V1);
    expect(again.ops.filter((o) => o.endsWith(hqDataFormatKey(fx.site)))).toEqual([`get:${hqDataFormatKey(fx.site)}`]);
  });

  it('is raised by a newer program and never lowered by an older one', async () => {
    const fx = makeSite('82', { rows: 20 });
    dirs.push(fx.data);
    const hq = temp('hq');
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), V1);
    writeStock(fx, 20, 30, 2);
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), V2);
    expect(markAt(hq, fx.site)).toEqual({ written: 2, requires: 2, by: 'tilstand 2.0.0' });
    // The copy from before the upgrade, run again by the older program: HQ keeps the tags the newer one sent.
    writeStock(fx, 30, 40, 3);
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), V1);
    expect(markAt(hq, fx.site)).toEqual({ written: 2, requires: 2, by: 'tilstand 2.0.0' });
    writeStock(fx, 40, 50, 4);
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), { written: 3, requires: 2, by: 'tilstand 3.0.0' });
    expect(markAt(hq, fx.site)).toEqual({ written: 3, requires: 2, by: 'tilstand 3.0.0' });
  });

  it('runs no step while the mark cannot be written: HQ never holds this program’s files without it', async () => {
    const fx = makeSite('83', { rows: 20 });
    dirs.push(fx.data);
    const hq = temp('hq');
    const rec = new Recording(dirTarget(hq, fx.site));
    rec.failPointer = (key) => key === hqDataFormatKey(fx.site);
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: rec, scheduledTags: null, retry: { baseMs: 10, maxMs: 50, jitter: 0 }, dataFormat: V1 });
    try {
      await e.enqueueSnapshotSync();
      const r = await e.runOnce();
      expect(r.done).toBe(0);
      expect(rec.ops.some((o) => o.startsWith('put:'))).toBe(false);
      expect(e.status().lastError).toContain('connection reset (test)');
      rec.failPointer = undefined;
      expect((await e.syncNow(5)).status.pendingItems).toBe(0);
      expect(markAt(hq, fx.site)).toEqual({ written: 1, requires: 1, by: 'tilstand 1.0.0' });
    } finally {
      await e.close();
    }
  });

  it('a damaged mark is written again with the program’s numbers, and logged', async () => {
    const fx = makeSite('84', { rows: 20 });
    dirs.push(fx.data);
    const hq = temp('hq');
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site));
    writeFileSync(markPath(hq, fx.site), '{"written": "two"');
    writeStock(fx, 20, 30, 2);
    const logs: string[] = [];
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), V1, (l) => logs.push(l));
    expect(markAt(hq, fx.site)).toEqual({ written: 1, requires: 1, by: 'tilstand 1.0.0' });
    expect(logs.some((l) => l.includes(`HQ's data format mark ${hqDataFormatKey(fx.site)} at dir:${hq} is damaged: not JSON`))).toBe(true);
  });
});

describe("restore reads HQ's data format mark first", () => {
  const tooNew = (site: string, hq: string) =>
    `HQ's copy of site ${site} (dir:${hq}) has data format 2 (sent by tilstand 2.0.0) and requires a program that knows data format 2 or later; ` +
    `this one (tilstand 1.0.0) knows data format 1 and would restore a directory it misreads, so nothing was restored or written. ` +
    'Install tilstand 2.0.0 (the version that sent it) or a later one and run its `tilstand restore` (docs/operations.md, "Upgrading")';

  it('refuses an HQ a newer program sent to, exit 2, naming both versions, before writing anything', async () => {
    const fx = makeSite('85', { rows: 20 });
    dirs.push(fx.data);
    const hq = temp('hq');
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), V2);
    const senderBefore = readFileSync(join(hq, ...senderMarkerKey(fx.site).split('/')), 'utf8');
    const fresh = join(temp('fresh'), 'data');
    await expect(restoreSite({ dataDir: fresh, target: dirTarget(hq, fx.site), site: fx.site, dataFormat: V1 })).rejects.toThrow(tooNew(fx.site, hq));
    expect(existsSync(fresh), 'the restore made its directory').toBe(false);
    const r = await runCli((argv, io) => runRestore(argv, io, { dataFormat: V1 }), ['--data', fresh, '--hq', hq, '--site', fx.site]);
    expect([r.code, r.out, r.err]).toEqual([2, '', `tilstand: ${tooNew(fx.site, hq)}\n`]);
    expect(existsSync(fresh), 'the restore made its directory').toBe(false);
    // Nothing written at HQ either: the sender marker still names the site that sent.
    expect(readFileSync(join(hq, ...senderMarkerKey(fx.site).split('/')), 'utf8')).toBe(senderBefore);
    // Into a directory that exists, with --force: nothing is added to it (no lock, no warehouse).
    const existing = join(temp('existing'), 'data');
    mkdirSync(existing);
    writeFileSync(join(existing, 'keep.txt'), 'x');
    const forced = await runCli((argv, io) => runRestore(argv, io, { dataFormat: V1 }), ['--data', existing, '--hq', hq, '--site', fx.site, '--force']);
    expect(forced.code).toBe(2);
    expect(existsSync(join(existing, 'warehouse'))).toBe(false);
    expect(existsSync(join(existing, 'sync.lock'))).toBe(false);
    // The program that knows the format restores it.
    const ok = await runCli((argv, io) => runRestore(argv, io, { dataFormat: V2 }), ['--data', fresh, '--hq', hq, '--site', fx.site]);
    expect(ok.code, ok.err).toBe(0);
    expect(existsSync(join(fresh, 'warehouse', 'site_85.db', 'stock'))).toBe(true);
  });

  it('restores an HQ without a mark (sent by an older version) as before, and one whose requires it knows', async () => {
    const fx = makeSite('86', { rows: 20 });
    dirs.push(fx.data);
    const hq = temp('hq');
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site));
    expect(existsSync(markPath(hq, fx.site))).toBe(false);
    const fresh = join(temp('fresh'), 'data');
    const note = await restoreSite({ dataDir: fresh, target: dirTarget(hq, fx.site), site: fx.site, dataFormat: V1 });
    expect(note.tables.stock?.snapshotId).not.toBeNull();
    // written above, requires within: a compatible addition restores.
    writeStock(fx, 20, 30, 2);
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), { written: 2, requires: 1, by: 'tilstand 1.5.0' });
    const other = join(temp('fresh'), 'data');
    await restoreSite({ dataDir: other, target: dirTarget(hq, fx.site), site: fx.site, dataFormat: V1 });
  });

  it('reports a damaged mark as corruption, exit 4, naming it, before writing anything', async () => {
    const fx = makeSite('87', { rows: 20 });
    dirs.push(fx.data);
    const hq = temp('hq');
    await syncWith(fx.data, fx.site, dirTarget(hq, fx.site), V1);
    const fresh = join(temp('fresh'), 'data');
    for (const [bytes, why] of [
      ['{"written": 1', 'not JSON'],
      ['[1, 1]', 'not a JSON object'],
      ['{"written": 1, "requires": 0, "by": "x"}', "'requires' is 0"],
      ['{"written": 1.5, "requires": 1}', "'written' is 1.5"],
      ['{"requires": 1}', "'written' is missing"],
    ] as const) {
      writeFileSync(markPath(hq, fx.site), bytes);
      const r = await runCli((argv, io) => runRestore(argv, io, { dataFormat: V1 }), ['--data', fresh, '--hq', hq, '--site', fx.site]);
      expect(r.code, bytes).toBe(4);
      expect(r.err, bytes).toBe(
        `tilstand: HQ's data format mark ${hqDataFormatKey(fx.site)} at dir:${hq} is damaged: ${why}; expected {"written": <n>, "requires": <n>, "by": "<program>"} with whole numbers from 1 (a running site's next sync writes it again; for a site that is gone, remove it at HQ and restore with the version the site last ran, or a later one)\n`,
      );
      expect(existsSync(fresh), bytes).toBe(false);
    }
  });
});

describe("HQ's data format mark on S3 (s3rver on loopback)", () => {
  let s3: S3Fixture;
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(() => s3?.close());
  const target = (site?: string) => new S3Target({ bucket: s3.bucket, root: 'sites/', endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', ...(site ? { writePrefix: sitePrefix(site) } : {}) });

  it('the sync writes it once; restore of an older program is refused, a program that knows it restores', async () => {
    const fx = makeSite('88', { rows: 20 });
    dirs.push(fx.data);
    const t = target(fx.site);
    try {
      await syncWith(fx.data, fx.site, t, V2);
      writeStock(fx, 20, 30, 2);
      await syncWith(fx.data, fx.site, t, V2);
    } finally {
      await t.close();
    }
    expect(s3.puts.get(`sites/${hqDataFormatKey(fx.site)}`)).toBe(1);
    const fresh = join(temp('fresh'), 'data');
    const r = target(fx.site);
    try {
      await expect(restoreSite({ dataDir: fresh, target: r, site: fx.site, dataFormat: V1 })).rejects.toThrow(
        `HQ's copy of site 88 (s3://${s3.bucket}/sites/ (${s3.endpoint})) has data format 2 (sent by tilstand 2.0.0) and requires a program that knows data format 2 or later`,
      );
      expect(existsSync(fresh)).toBe(false);
      const note = await restoreSite({ dataDir: fresh, target: r, site: fx.site, dataFormat: V2 });
      expect(note.tables.stock?.snapshotId).not.toBeNull();
    } finally {
      await r.close();
    }
  });
});
