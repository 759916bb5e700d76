// A directory HQ where someone left, inside a table's folder, a symbolic link to a large tree that
// is no part of the table (an admin's `ln -s /srv/archive stock/archive`). Since the listing
// follows links (a table moved onto a disk of its own, hq-table-symlink.test.ts), `hq pull` walked
// that tree and copied all of it into the analyst's warehouse, and `hq sites` walked it too. A link
// is followed where a site's files lie (the site's folder, a table's, its layout folders and
// partition and bucket folders, `.tilstand`); one elsewhere is left out of the listing.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { runHq } from './cli/hq.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
});

describe('a directory HQ with a link inside a table folder to an unrelated tree', () => {
  it('is not walked or copied; a table and a bucket folder linked onto another disk still are', async () => {
    const fx = makeSite('46', { rows: 30 });
    const hqDir = tempDir('hq');
    const otherDisk = tempDir('other-disk');
    const archive = tempDir('archive');
    const pulled = join(tempDir('pulled'), 'warehouse');
    cleanup.push(fx.data, hqDir, otherDisk, archive, join(pulled, '..'));
    await shipToDirectory(fx.data, fx.site, hqDir);
    for (let i = 0; i < 20; i++) {
      fs.mkdirSync(join(archive, `d${i}`), { recursive: true });
      fs.writeFileSync(join(archive, `d${i}`, 'big.bin'), Buffer.alloc(1000));
    }
    // The stock table on another disk, linked back; its bucket folder on a third place, linked.
    fs.renameSync(join(hqDir, 'site_46.db', 'stock'), join(otherDisk, 'stock'));
    fs.symlinkSync(join(otherDisk, 'stock'), join(hqDir, 'site_46.db', 'stock'), 'dir');
    const bucket = fs.readdirSync(join(otherDisk, 'stock')).find((n) => n.startsWith('bucket-'))!;
    fs.renameSync(join(otherDisk, 'stock', bucket), join(otherDisk, `stock-${bucket}`));
    fs.symlinkSync(join(otherDisk, `stock-${bucket}`), join(otherDisk, 'stock', bucket), 'dir');
    // The unrelated tree, linked inside two tables' folders.
    fs.symlinkSync(archive, join(otherDisk, 'stock', 'archive'), 'dir');
    fs.symlinkSync(archive, join(hqDir, 'site_46.db', 'approval_inbox', 'old'), 'dir');

    const listed = await new DirectoryTarget(hqDir).list('site_46.db/');
    expect(listed.filter((o) => o.key.includes('big.bin'))).toEqual([]);
    expect(listed.some((o) => o.key.startsWith(`site_46.db/stock/${bucket}/`))).toBe(true);

    const sites = await runCli(runHq, ['sites', '--hq', hqDir, '--json']);
    expect([sites.code, sites.err]).toEqual([0, '']);
    expect(JSON.parse(sites.out)).toMatchObject([{ site: '46', tables: 3 }]);

    const pull = await runCli(runHq, ['pull', '--hq', hqDir, '--site', '46', '--out', pulled]);
    expect([pull.code, pull.err.includes('tilstand:')]).toEqual([0, false]);
    expect(fs.existsSync(join(pulled, 'site_46.db', 'stock', 'archive'))).toBe(false);
    expect(fs.existsSync(join(pulled, 'site_46.db', 'approval_inbox', 'old'))).toBe(false);
    expect(scanSorted(new Catalog(pulled).getTable({ database: 'site_46', table: 'stock' }))).toEqual(scanSorted(fx.table('stock')));
  }, 60_000);
});
