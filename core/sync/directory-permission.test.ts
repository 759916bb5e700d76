// A directory HQ (a mounted share, a backup disk) whose folder the site's user may not write, or
// that is mounted read-only: creating a folder or a new file there fails EACCES/EPERM/EROFS at
// every attempt. It was Transport: `online` false, health "nothing reached HQ" after a whole
// window, and the operator sent to the line. It is AccessDenied now — unhealthy at once
// (`credentials`), `lastError` saying the folder cannot be written and what to check — retried at
// backoff, so a folder fixed resumes without a restart. A rename or write-back error after the
// file was created stays Transport (on a share another process holding the file can cause it).
//
// The folder is made unwritable for real: chmod 0555, or, as root (whom modes do not stop), the
// immutable attribute (chattr +i, EPERM); the test checks that a write there fails first.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { isSyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { drain, healthSite, MINUTE, statusFromOutbox } from './test-support/health-site.ts';
import { tempDir } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
const locked = new Set<string>();
afterAll(() => {
  for (const d of locked) writable(d);
  for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const root = process.getuid?.() === 0;

/** Makes `dir` refuse new entries to this process (and checks that it does). */
function unwritable(dir: string): void {
  if (root) execFileSync('chattr', ['+i', dir]);
  else fs.chmodSync(dir, 0o555);
  locked.add(dir);
  expect(() => fs.writeFileSync(join(dir, 'probe'), 'x'), `${dir} could not be made unwritable here`).toThrow(/EACCES|EPERM/);
}

function writable(dir: string): void {
  if (root) execFileSync('chattr', ['-i', dir]);
  else fs.chmodSync(dir, 0o755);
  locked.delete(dir);
}

const leftovers = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String).filter((n) => n.endsWith('.tmp')) : []);

describe('a directory target whose folder cannot be written', () => {
  it("a put is AccessDenied naming the folder, whether the key's folder cannot be made or the file cannot be created", async () => {
    const hq = tempDir('hq-perm');
    cleanup.push(hq);
    const t = new DirectoryTarget(hq, { writePrefix: sitePrefix('5') });
    const body = new Uint8Array([1, 2, 3]);
    const meta = { size: 3, sha256: '', md5: '' };
    // The root: site_5.db/ cannot be made in it.
    unwritable(hq);
    const mkdir = await t.put('site_5.db/stock/a.bin', body, meta).catch((e: unknown) => e);
    expect(isSyncError(mkdir, 'AccessDenied'), String(mkdir)).toBe(true);
    expect((mkdir as Error).message).toMatch(new RegExp(`^put site_5\\.db/stock/a\\.bin: HQ's folder ${hq} cannot be written by this site \\((EACCES|EPERM): .*mkdir`));
    writable(hq);
    // The key's folder exists and refuses its new temporary file.
    fs.mkdirSync(join(hq, 'site_5.db', 'stock'), { recursive: true });
    unwritable(join(hq, 'site_5.db', 'stock'));
    const open = await t.putPointer('site_5.db/stock/snapshot-1', body).catch((e: unknown) => e);
    expect(isSyncError(open, 'AccessDenied'), String(open)).toBe(true);
    expect((open as Error).message).toMatch(/cannot be written by this site \((EACCES|EPERM): .*open '.*\.tmp'\)$/);
    writable(join(hq, 'site_5.db', 'stock'));
    await t.put('site_5.db/stock/a.bin', body, meta);
    expect(fs.readFileSync(join(hq, 'site_5.db', 'stock', 'a.bin'))).toEqual(Buffer.from(body));
    expect(leftovers(hq)).toEqual([]);
  });

  it('an EACCES once the file is written (a rename over a file another process holds) stays Transport', async () => {
    const hq = tempDir('hq-lock');
    cleanup.push(hq);
    const t = new DirectoryTarget(hq, { writePrefix: sitePrefix('5') });
    vi.spyOn(fs.promises, 'rename').mockRejectedValueOnce(Object.assign(new Error("EACCES: permission denied, rename 'a' -> 'b'"), { code: 'EACCES' }));
    const e = await t.putPointer('site_5.db/stock/snapshot/LATEST', new Uint8Array([49])).catch((err: unknown) => err);
    expect(isSyncError(e, 'Transport'), String(e)).toBe(true);
    expect(leftovers(hq)).toEqual([]);
    await t.putPointer('site_5.db/stock/snapshot/LATEST', new Uint8Array([49]));
    expect(fs.readFileSync(join(hq, 'site_5.db', 'stock', 'snapshot', 'LATEST'), 'utf8')).toBe('1');
  });

  it('the engine is unhealthy at once, says the folder cannot be written and what to check, logs it once, and resumes when it is fixed', async () => {
    const logs: string[] = [];
    const s = healthSite('96', cleanup);
    unwritable(s.inner.root);
    const e = s.open((l) => logs.push(l));
    const started = s.clock.now;
    await e.enqueueSnapshotSync();
    await drain(e);
    const st = e.status();
    expect(st).toMatchObject({ healthy: false, problems: ['credentials'], online: false });
    expect(st.lastError).toMatch(
      new RegExp(
        `^HQ's folder refuses this site's writes: dir:${s.inner.root} has refused its put requests since ${new Date(started).toISOString()} ` +
          `\\(put: put site_96\\.db/\\S+: HQ's folder ${s.inner.root} cannot be written by this site \\((EACCES|EPERM): [^)]*\\)\\); ` +
          `check that the folder is writable for the user the site runs as and not mounted read-only`,
      ),
    );
    // `sync status` reads the same from the outbox.
    expect(statusFromOutbox(s.fx, s.clock.now)).toMatchObject({ healthy: false, problems: ['credentials'], lastError: st.lastError });
    // Retried at backoff, not cancelled; logged once, in the folder's words.
    for (let i = 0; i < 3; i++) {
      s.clock.now += MINUTE;
      await e.enqueueSnapshotSync();
      await drain(e);
    }
    expect(e.status()).toMatchObject({ healthy: false, problems: ['credentials'] });
    expect(e.status().pendingItems).toBeGreaterThan(0);
    expect(logs.filter((l) => l.includes('refuses this site'))).toEqual([
      expect.stringMatching(new RegExp(`^sync: dir:${s.inner.root} refuses this site's put requests \\(check that the site's user may write the folder; retried\\): SyncError: put `)),
    ]);
    // The folder fixed: the next round after the backoff sends everything and clears it.
    writable(s.inner.root);
    s.clock.now += MINUTE;
    await e.enqueueSnapshotSync();
    await drain(e);
    expect(e.status()).toMatchObject({ pendingItems: 0, healthy: true, lastError: null, online: true });
    expect(fs.existsSync(join(s.inner.root, sitePrefix(s.fx.site), 'stock', 'snapshot', 'LATEST'))).toBe(true);
    expect(logs.some((l) => l.includes('accepts this site'))).toBe(true);
    await e.close();
  });
});
