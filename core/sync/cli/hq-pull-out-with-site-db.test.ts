// `hq pull --out` refuses a site's data directory, its warehouse and the folders inside it
// (hq-pull-into-site.test.ts), found by the data directory's mark files. A file named site.db (or
// journal.db) alone marked any folder: an analyst's folder that holds another program's site.db —
// the --out folder itself, or a folder above it — was refused as a site's data directory, exit 2,
// though no site was there. A data directory has its config.json beside the mark.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-pull-site-db-'));
const cleanup: string[] = [dir];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('hq pull --out <a folder that merely holds a file named site.db>', () => {
  it('pulls, in the folder itself and in a folder below one', async () => {
    const fx = makeSite('live', { rows: 5 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const analyst = join(dir, 'analyst');
    mkdirSync(analyst);
    writeFileSync(join(analyst, 'site.db'), 'another program\'s database');
    writeFileSync(join(analyst, 'journal.db'), 'and its journal');
    for (const out of [analyst, join(analyst, 'hq-copy')]) {
      const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'live', '--out', out]);
      expect(r.code, `${out}: ${r.err}`).toBe(0);
      expect(readdirSync(out)).toContain('site_live.db');
    }
  }, 60_000);
});
