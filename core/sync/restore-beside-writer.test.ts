// `tilstand restore --force` beside a process that writes the site's tables. A site that runs
// without sync holds no sync lock, but its ingest holds each of its tables' writer locks
// (core/lsm/writer-lock.ts) from open: a restore that would remove the site's database folder takes
// every table's writer lock first, so a live writer makes it fail with Conflict, the directory as it
// was. A child process holding one table's writer lock stands in for the running site. Also: a
// restore of one site into a directory whose unfinished-restore mark names another, and such a
// restore with --force stopped (an EIO injected) where its mark is written or where the other
// site's half copy's removal is made durable: the rerun leaves no half copy of the other site.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, LsmError } from '../lsm/index.ts';
import { withFsFault } from '../lsm/testing/fs-faults.ts';
import { heldInThisProcess } from '../lsm/writer-lock.ts';
import { TablePaths } from '../lsm/table-paths.ts';
import { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { readRestoreNote, restoreSite, RESTORE_UNFINISHED } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir, type SiteFixture } from './test-support/site-fixture.ts';
import { filesOf } from './test-support/files.ts';

const cleanup: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** A site with its tables synced to a directory HQ. */
async function syncedSite(site: string): Promise<{ fx: SiteFixture; hq: string }> {
  const fx = makeSite(site, { rows: 60 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), scheduledTags: null });
  await e.syncNow(5);
  await e.close();
  return { fx, hq };
}

/** The outbox as rows: its steps, its record of what HQ holds, its state. */
function outboxOf(data: string): unknown {
  const db = new Database(join(data, 'site.db'), { readonly: true });
  try {
    return {
      steps: db.prepare('SELECT * FROM sync_outbox ORDER BY id').all(),
      atHq: db.prepare('SELECT * FROM sync_at_hq ORDER BY key').all(),
      state: db.prepare('SELECT * FROM sync_state ORDER BY k').all(),
    };
  } finally {
    db.close();
  }
}

/**
 * A child process that takes the writer lock at `lockFile` (as a running site's ingest does) and
 * holds it until killed; or, with `die`, kills itself (SIGKILL) holding it, leaving a stale lock.
 */
async function lockHolder(lockFile: string, die = false): Promise<ChildProcess> {
  const script = `
    const { WriterLock } = await import(${JSON.stringify(resolve(__dirname, '../lsm/writer-lock.ts'))});
    WriterLock.acquire(${JSON.stringify(lockFile)}, 'table');
    console.log('held');
    ${die ? "process.kill(process.pid, 'SIGKILL');" : 'setInterval(() => {}, 1000);'}
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('held')) done();
    });
    child.once('exit', () => (die && out.includes('held') ? done() : fail(new Error(`lock holder exited: ${out}`))));
  });
  if (die) await new Promise<void>((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.once('exit', () => done())));
  return child;
}

const stockLock = (data: string, site: string): string => new TablePaths(join(data, 'warehouse', `site_${site}.db`, 'stock')).lockFile;

describe('restore --force beside a live writer of a site table', () => {
  it('fails with Conflict naming the table and the process; the directory, the outbox and the mark as they were', async () => {
    const { fx, hq } = await syncedSite('81');
    const db = join(fx.data, 'warehouse', 'site_81.db');
    const holder = await lockHolder(stockLock(fx.data, fx.site));
    try {
      const before = filesOf(db);
      const outbox = outboxOf(fx.data);
      expect(Object.keys(before).some((k) => k.startsWith('stock/snapshot/'))).toBe(true);
      expect((outbox as { atHq: unknown[] }).atHq.length).toBeGreaterThan(0);

      const err = await restoreSite({ dataDir: fx.data, target: new DirectoryTarget(hq), site: fx.site, force: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LsmError);
      expect((err as LsmError).kind).toBe('Conflict');
      expect((err as Error).message).toContain(`table stock of ${db} is being written by process ${holder.pid}`);
      expect((err as Error).message).toContain('stop the site');

      expect(filesOf(db)).toEqual(before);
      expect(outboxOf(fx.data)).toEqual(outbox);
      expect(existsSync(join(fx.data, RESTORE_UNFINISHED))).toBe(false);
      expect(readRestoreNote(fx.data)).toBeUndefined();
      // The tables the restore locked before the live one are released: the same process can write them.
      for (const t of ['approval_inbox', 'decision_log']) expect(heldInThisProcess(new TablePaths(join(db, t)).lockFile)).toBe(false);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 60_000);

  it('proceeds over a stale lock (its holder dead), and releases every lock it took', async () => {
    const { fx, hq } = await syncedSite('82');
    const want = Object.fromEntries(['stock', 'approval_inbox', 'decision_log'].map((t) => [t, scanSorted(fx.table(t))]));
    writeFileSync(join(fx.data, 'warehouse', 'site_82.db', 'stock', 'stray-file'), 'not at HQ');
    await lockHolder(stockLock(fx.data, fx.site), true);
    expect(existsSync(stockLock(fx.data, fx.site))).toBe(true);

    const note = await restoreSite({ dataDir: fx.data, target: new DirectoryTarget(hq), site: fx.site, force: true });
    expect(readRestoreNote(fx.data)).toEqual(note);
    expect(existsSync(join(fx.data, RESTORE_UNFINISHED))).toBe(false);
    // The folder was removed and copied again: the stray file and the stale lock are gone.
    expect(existsSync(join(fx.data, 'warehouse', 'site_82.db', 'stock', 'stray-file'))).toBe(false);
    expect(existsSync(stockLock(fx.data, fx.site))).toBe(false);
    const catalog = new Catalog(join(fx.data, 'warehouse'));
    for (const [t, rows] of Object.entries(want)) {
      const table = catalog.getTable({ database: 'site_82', table: t });
      expect(scanSorted(table)).toEqual(rows);
      // Its lock went with its folder and is no longer this process's: a writer opens.
      expect(heldInThisProcess(table.paths.lockFile)).toBe(false);
      table.newWriter().close();
    }
  }, 60_000);
});

describe('a restore into a directory whose unfinished restore is of another site', () => {
  /** Site A's half copy in `data`, with its mark: A's restore was killed midway. */
  async function halfCopyOfA(): Promise<{ data: string; hqA: string; hqB: string; a: SiteFixture; b: SiteFixture }> {
    const { fx: a, hq: hqA } = await syncedSite('83');
    const { fx: b, hq: hqB } = await syncedSite('84');
    const data = tempDir('target');
    cleanup.push(data);
    await restoreSite({ dataDir: data, target: new DirectoryTarget(hqA), site: a.site });
    // What a kill midway leaves: the mark, no note (the tables are more than a half copy here, which
    // changes nothing: the mark says they are one).
    rmSync(join(data, 'restore-note.json'));
    writeFileSync(join(data, RESTORE_UNFINISHED), JSON.stringify({ site: a.site, hq: hqA, startedAtMs: Date.UTC(2026, 11, 1, 8) }));
    return { data, hqA, hqB, a, b };
  }

  it('is refused without --force, naming the unfinished site and how to finish it; nothing changes', async () => {
    const { data, hqA, hqB, b } = await halfCopyOfA();
    const before = filesOf(data);
    const err = await restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: b.site }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SyncError);
    expect((err as SyncError).kind).toBe('InvalidArgument');
    const m = (err as Error).message;
    expect(m).toContain(`holds an unfinished restore of site 83 (from HQ ${hqA}, begun 2026-12-01T08:00:00.000Z; ${join(data, RESTORE_UNFINISHED)})`);
    expect(m).toContain(`finish it with \`tilstand restore --data ${data} --hq <that HQ> --site 83\``);
    expect(m).toContain(`--force removes site 83's half copy (${join(data, 'warehouse', 'site_83.db')})`);
    expect(filesOf(data)).toEqual(before);
  }, 60_000);

  it('with --force removes the half copy and restores the other site; a live writer of the half copy refuses it', async () => {
    const { data, hqB, b } = await halfCopyOfA();
    const catalog = new Catalog(join(data, 'warehouse'));
    const holder = await lockHolder(stockLock(data, '83'));
    try {
      const before = filesOf(data);
      const err = await restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: b.site, force: true }).catch((e: unknown) => e);
      expect((err as LsmError).kind).toBe('Conflict');
      expect((err as Error).message).toContain(`table stock of ${join(data, 'warehouse', 'site_83.db')} is being written by process ${holder.pid}`);
      expect(filesOf(data)).toEqual(before);
    } finally {
      holder.kill('SIGKILL');
      await new Promise<void>((done) => (holder.exitCode !== null || holder.signalCode !== null ? done() : holder.once('exit', () => done())));
    }

    const note = await restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: b.site, force: true });
    expect(note.site).toBe('84');
    expect(catalog.databaseExists('site_83')).toBe(false);
    expect(scanSorted(catalog.getTable({ database: 'site_84', table: 'stock' }))).toEqual(scanSorted(b.table('stock')));
    expect(existsSync(join(data, RESTORE_UNFINISHED))).toBe(false);
    // Its lock released with the folder: nothing of this process holds site 83's tables.
    expect(heldInThisProcess(stockLock(data, '83'))).toBe(false);
  }, 60_000);

  /**
   * A --force restore of site 84 over site 83's mark, with `folder`'s fsync failing (EIO) while the
   * restore runs up to its first wait (the mark, the removals and the copy's start are synchronous):
   * its error.
   */
  async function forceStoppedAt(data: string, hqB: string, folder: string): Promise<Error> {
    let pending: Promise<unknown> | undefined;
    const failed = withFsFault({ at: 'fsync', code: 'EIO', paths: [folder] }, () => {
      pending = restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: '84', force: true }).catch((e: unknown) => e);
    });
    expect(failed).toEqual([resolve(folder)]);
    const err = await pending;
    expect(err).toBeInstanceOf(Error);
    return err as Error;
  }

  const markOf = (data: string): unknown => JSON.parse(readFileSync(join(data, RESTORE_UNFINISHED), 'utf8'));

  it('with --force stopped as its mark is written (EIO on the data folder): the half copy is gone already, and the rerun restores the site alone', async () => {
    const { data, hqB, b } = await halfCopyOfA();
    const err = await forceStoppedAt(data, hqB, data);
    expect(err.message).toContain(`EIO: injected failure, fsync '${resolve(data)}'`);
    // The mark's rename is done (it names site 84 now); site 83's half copy went before it.
    expect(markOf(data)).toMatchObject({ site: '84' });
    expect(existsSync(join(data, 'warehouse', 'site_83.db'))).toBe(false);

    // The rerun of its own unfinished restore needs no --force.
    const note = await restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: b.site });
    expect(note.site).toBe('84');
    expect(readdirSync(join(data, 'warehouse')).sort()).toEqual(['site_84.db']);
    expect(scanSorted(new Catalog(join(data, 'warehouse')).getTable({ database: 'site_84', table: 'stock' }))).toEqual(scanSorted(b.table('stock')));
    expect(existsSync(join(data, RESTORE_UNFINISHED))).toBe(false);
  }, 60_000);

  it("with --force stopped as the half copy's removal is made durable (EIO on the warehouse): the mark still names the other site, and the rerun with --force finishes", async () => {
    const { data, hqB, b } = await halfCopyOfA();
    const err = await forceStoppedAt(data, hqB, join(data, 'warehouse'));
    expect(err.message).toContain(`EIO: injected failure, fsync '${join(data, 'warehouse')}'`);
    // Not written: a power cut could bring the half copy back, and a mark naming 84 would then leave it for good.
    expect(markOf(data)).toMatchObject({ site: '83' });
    // Refused without --force as before, no longer naming a half copy that is gone.
    const refused = await restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: b.site }).catch((e: unknown) => e);
    expect((refused as SyncError).kind).toBe('InvalidArgument');
    expect((refused as Error).message).toContain("--force removes site 83's half copy and restores site 84 in its place");

    const note = await restoreSite({ dataDir: data, target: new DirectoryTarget(hqB), site: b.site, force: true });
    expect(note.site).toBe('84');
    expect(readdirSync(join(data, 'warehouse')).sort()).toEqual(['site_84.db']);
    expect(existsSync(join(data, RESTORE_UNFINISHED))).toBe(false);
  }, 60_000);
});
