// A site whose warehouse was moved onto a disk of its own and linked back (`<data>/warehouse` a
// symbolic link to the other disk's folder): `hq pull --out <that folder>` named the real place of
// the site's live tables, which lies in no data directory, and the refusal (which walks up from
// the folder given and from where it leads) let it through: the pull wrote HQ's older copy over
// the live tables (with --force; without it their newer commits were refused as an analyst's,
// exit 3). Recognised now through HQ's sender marker, which names the data directory that sends
// for the site on this PC: its warehouse compared where both lead. Exit 2, nothing written.
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir, writeStock } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-pull-moved-wh-'));
const cleanup: string[] = [dir];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${relative(root, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(root);
  return out.sort();
}

describe("hq pull --out <the real folder of a site's warehouse linked back into its data directory>", () => {
  it('is refused, exit 2, naming the data directory; the live tables stay as they were', async () => {
    const fx = makeSite('moved', { rows: 20 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    // The warehouse moved to another disk and linked back.
    const real = join(dir, 'disk2', 'tilstand-warehouse');
    mkdirSync(join(dir, 'disk2'));
    renameSync(join(fx.data, 'warehouse'), real);
    symlinkSync(real, join(fx.data, 'warehouse'));
    await shipToDirectory(fx.data, fx.site, hqDir);
    writeStock(fx, 20, 30, 2); // the site commits on after HQ got its copy
    const before = files(real);
    const rows = fx.table('stock').scanRows({});
    for (const out of [real, join(real, 'site_moved.db')]) {
      for (const force of [[], ['--force']]) {
        const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'moved', '--out', out, ...force]);
        expect([r.code, r.out], `${out} ${force}`).toEqual([2, '']);
        expect(r.err, out).toMatch(/^tilstand: option '--out': .* (is the warehouse of the site data directory |is inside the warehouse of the site data directory ).*; pull into a warehouse outside it\n$/);
        expect(r.err).toContain(fx.data);
      }
    }
    expect(files(real)).toEqual(before);
    expect(fx.table('stock').scanRows({})).toEqual(rows);
    // A warehouse beside it on that disk is pulled into as before.
    const ok = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'moved', '--out', join(dir, 'disk2', 'copy')]);
    expect(ok.code, ok.err).toBe(0);
  }, 60_000);
});
