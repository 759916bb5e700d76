// `tilstand sync status` and `sync now` on a site.db that is damaged say so, naming the file, with
// exit 4 (a damaged file, docs/hq.md): they printed SQLite's "file is not a database" alone,
// naming no file, and exited 5, the code of a failing disk.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { runSync } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-damaged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand sync status on a damaged site.db', () => {
  it('reports corruption in site.db, exit 4, nothing on stdout', async () => {
    const data = join(dir, 'site');
    mkdirSync(data);
    const siteDb = join(data, 'site.db');
    // Not SQLite's header: what a file overwritten by something else, or one cut at its start, holds.
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    const r = await runCli(runSync, ['status', '--data', data]);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toBe(`tilstand: corruption in ${siteDb}: file is not a database\n`);
  });

  it('sync now: the same, before it sends anything', async () => {
    const data = join(dir, 'site-now');
    const hq = join(dir, 'hq');
    mkdirSync(data);
    mkdirSync(hq);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ site: 'north' }));
    const siteDb = join(data, 'site.db');
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    const r = await runCli(runSync, ['now', '--data', data, '--hq', hq, '--max-rounds', '1']);
    expect([r.code, r.out, r.err]).toEqual([4, '', `tilstand: corruption in ${siteDb}: file is not a database\n`]);
    expect(readdirSync(hq)).toEqual([]);
  });
});

describe('tilstand restore --force over a damaged site.db', () => {
  it('reports corruption in site.db, exit 4, and leaves no mark of an unfinished restore', async () => {
    const { makeSite, tempDir } = await import('../test-support/site-fixture.ts');
    const { shipToDirectory } = await import('../test-support/ship.ts');
    const { runRestore } = await import('./sync.ts');
    const fx = makeSite('rd', { rows: 5 });
    const hq = tempDir('hq');
    try {
      await shipToDirectory(fx.data, fx.site, hq);
      const siteDb = join(fx.data, 'site.db');
      writeFileSync(siteDb, 'this is no database; '.repeat(400));
      const r = await runCli(runRestore, ['--data', fx.data, '--hq', hq, '--site', fx.site, '--force']);
      expect([r.code, r.out]).toEqual([4, '']);
      expect(r.err).toContain(`corruption in ${siteDb}`);
      // Left, it said a restore was under way: the site's start and init refused the directory,
      // its tables untouched, and every rerun failed the same way.
      expect(readdirSync(fx.data)).not.toContain('restore-unfinished.json');
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
      rmSync(hq, { recursive: true, force: true });
    }
  }, 60_000);
});
