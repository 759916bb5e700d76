// `tilstand hq …` on a fresh share no site has shipped to yet: what the share itself keeps at its
// root is no sign of a mistyped --hq. The refusal of a folder that is no HQ (hq.ts NOT_FOREIGN)
// knew Synology's `#recycle` and `@eaDir`, and refused (exit 2, "is not an HQ warehouse") a QNAP
// share's `@Recycle` and `@Recently-Snapshot`, a NetApp share's `~snapshot`, an older Windows
// disk's `RECYCLER`, and the `Network Trash Folder` / `Temporary Items` of a share macOS served:
// `hq sites` on such a share said exit 2 where it said "no site has shipped" (exit 0) before.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-fresh-share-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hq = (...args: string[]) => runCli((argv, io) => runHq(argv, io), args);

describe('hq on a fresh share', () => {
  it.each([['@Recycle'], ['@Recently-Snapshot'], ['~snapshot'], ['RECYCLER'], ['Network Trash Folder'], ['Temporary Items']])('with %j at its root: no site has shipped yet', async (entry) => {
    const share = mkdtempSync(join(dir, 'share-'));
    mkdirSync(join(share, entry));
    const r = await hq('sites', '--hq', share);
    expect([r.code, r.out, r.err]).toEqual([0, '', `tilstand: no site has shipped to ${share} yet\n`]);
    const t = await hq('tables', '--hq', share, '--site', '7');
    expect([t.code, t.err]).toEqual([1, `tilstand: HQ has no site 7 (check --site; no site has shipped to ${share} yet)\n`]);
  });

  it('still refuses a folder that holds something else beside them', async () => {
    const share = mkdtempSync(join(dir, 'share-'));
    mkdirSync(join(share, '@Recycle'));
    mkdirSync(join(share, 'warehouse'));
    const r = await hq('sites', '--hq', share);
    expect([r.code, r.err]).toEqual([2, `tilstand: option '--hq': ${share} is not an HQ warehouse: it holds no site's folder (site_<id>.db) but warehouse (check --hq)\n`]);
  });
});
