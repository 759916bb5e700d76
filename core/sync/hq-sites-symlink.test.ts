// `tilstand hq sites` on a directory HQ where a site's folder is a symbolic link to a directory
// (HQ's admin moved a large site onto a disk of its own and linked it back). The root's entries
// were taken as they are, and a link is no directory entry: the site was missing from `hq sites`
// (and from "sites at HQ" in a message), while `hq tables` and `hq scan` of it read through the
// link. A link to nothing (its disk not mounted) is no site, as an empty mount point is none, and
// a link that cannot be followed (a loop) fails no listing.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../lsm/testing/cli.ts';
import { runHq } from './cli/hq.ts';
import { makeSite, tempDir } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
});

describe('hq sites on a directory HQ with a site folder that is a symbolic link', () => {
  it('lists the linked site as it lists one in place, and leaves out a link to nothing or to itself', async () => {
    const linked = makeSite('41', { rows: 10 });
    const inPlace = makeSite('42', { rows: 5 });
    const hqDir = tempDir('hq');
    const otherDisk = tempDir('other-disk');
    cleanup.push(linked.data, inPlace.data, hqDir, otherDisk);
    await shipToDirectory(linked.data, linked.site, otherDisk);
    await shipToDirectory(inPlace.data, inPlace.site, hqDir);
    fs.symlinkSync(join(otherDisk, 'site_41.db'), join(hqDir, 'site_41.db'), 'dir');
    fs.symlinkSync(join(otherDisk, 'site_43.db'), join(hqDir, 'site_43.db'), 'dir'); // dangling
    fs.symlinkSync(join(hqDir, 'site_44.db'), join(hqDir, 'site_44.db'), 'dir'); // a loop (ELOOP)

    const r = await runCli(runHq, ['sites', '--hq', hqDir, '--json']);
    expect([r.code, r.err]).toEqual([0, '']);
    const newest = (fx: typeof linked) => Math.max(...['stock', 'approval_inbox', 'decision_log'].map((t) => fx.table(t).latestSnapshot()!.timeMillis));
    expect(JSON.parse(r.out)).toEqual([
      { site: '41', tables: 3, stateAsOfMs: newest(linked) },
      { site: '42', tables: 3, stateAsOfMs: newest(inPlace) },
    ]);

    const unknown = await runCli(runHq, ['tables', '--hq', hqDir, '--site', '8']);
    expect([unknown.code, unknown.err]).toEqual([1, 'tilstand: HQ has no site 8 (check --site; sites at HQ: 41, 42)\n']);
  }, 60_000);
});
