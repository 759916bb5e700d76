// A directory HQ where a folder below a site's folder is a symbolic link (HQ's admin moved a large
// table, or its bucket folders, onto a disk of its own and linked it back). The site's sync writes
// and `head`s through the link, and `hq tables`/`hq scan` read through it; but the folder's
// listing took the link as no folder and went past it: `hq sites` counted the table out, and
// `hq pull` and `restore` — which copy what the listing names — left the table out without a word
// (a restored site without its stock). A link to nothing, or in a loop, fails no listing.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runHq } from './cli/hq.ts';
import { restoreSite } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
});

describe('a directory HQ with a table folder that is a symbolic link', () => {
  it('is listed through the link: hq sites counts the table, pull and restore copy it', async () => {
    const fx = makeSite('45', { rows: 30 });
    const hqDir = tempDir('hq');
    const otherDisk = tempDir('other-disk');
    const restored = tempDir('restored');
    const pulled = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, otherDisk, restored, join(pulled, '..'));
    await shipToDirectory(fx.data, fx.site, hqDir);
    fs.renameSync(join(hqDir, 'site_45.db', 'stock'), join(otherDisk, 'stock'));
    fs.symlinkSync(join(otherDisk, 'stock'), join(hqDir, 'site_45.db', 'stock'), 'dir');
    fs.symlinkSync(join(otherDisk, 'gone'), join(hqDir, 'site_45.db', 'dangling'), 'dir');
    fs.symlinkSync(join(hqDir, 'site_45.db'), join(otherDisk, 'stock', 'up'), 'dir'); // a loop back up

    const sites = await runCli(runHq, ['sites', '--hq', hqDir, '--json']);
    expect([sites.code, sites.err]).toEqual([0, '']);
    expect(JSON.parse(sites.out)).toMatchObject([{ site: '45', tables: 3 }]);

    const pull = await runCli(runHq, ['pull', '--hq', hqDir, '--site', '45', '--out', pulled]);
    expect([pull.code, pull.err.includes('tilstand:')]).toEqual([0, false]);
    expect(pull.out).toContain('3 tables');
    const stock = (warehouse: string) => scanSorted(new Catalog(warehouse).getTable({ database: 'site_45', table: 'stock' }));
    expect(stock(pulled)).toEqual(scanSorted(fx.table('stock')));

    const note = await restoreSite({ dataDir: restored, target: new DirectoryTarget(hqDir), site: fx.site });
    expect(Object.keys(note.tables).sort()).toEqual(['approval_inbox', 'decision_log', 'stock']);
    expect(stock(join(restored, 'warehouse'))).toEqual(scanSorted(fx.table('stock')));
  }, 60_000);
});
