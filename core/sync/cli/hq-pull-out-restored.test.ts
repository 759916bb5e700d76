// `hq pull --out` refuses a site's data directory, its warehouse and the folders inside it
// (hq-pull-into-site.test.ts). Since a site.db or journal.db counts only with config.json beside it
// (hq-pull-out-with-site-db.test.ts: an analyst's folder holding another program's site.db), a
// directory `tilstand restore` rebuilt on a replacement PC — its tables, site.db and the data
// format mark, but no config.json until `tilstand init` writes one (HQ does not hold it) — was
// pulled into, exit 0: HQ's copy written over the restored site's live tables and the pull's
// bookkeeping left in its warehouse. The data format mark is this program's own, and a restore's
// site.db has the restore's note (or its unfinished mark) beside it: refused again, exit 2.
import { renameSync, rmSync, writeFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { RESTORE_NOTE, RESTORE_UNFINISHED } from '../restore.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';
import { runRestore } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-pull-restored-'));
const cleanup: string[] = [dir];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('hq pull --out <a data directory restore rebuilt, before init>', () => {
  it('is refused, exit 2, with the data format mark, the restore note or its unfinished mark', async () => {
    const fx = makeSite('live', { rows: 5 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const restored = join(dir, 'replacement');
    const r = await runCli(runRestore, ['--data', restored, '--hq', hqDir, '--site', 'live']);
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(restored)).not.toContain('config.json');
    const pull = (out: string) => runCli(runHq, ['pull', '--hq', hqDir, '--site', 'live', '--out', out]);
    const refused = async (what: string) => {
      for (const out of [restored, join(restored, 'warehouse'), join(restored, 'pulled')]) {
        const p = await pull(out);
        expect([p.code, p.out], `${what}: ${out}`).toEqual([2, '']);
        expect(p.err, `${what}: ${out}`).toMatch(/^tilstand: option '--out': .*site data directory .*; pull into a warehouse outside it\n$/);
      }
      expect(readdirSync(join(restored, 'warehouse', 'site_live.db')), what).not.toContain('.tilstand');
    };
    // As core/sync's restore leaves it: site.db (the outbox, the sender id) and the note.
    await refused('site.db and the restore note');
    // As `tilstand restore` leaves it (core/site raises the data format mark once it is rebuilt).
    writeFileSync(join(restored, 'data-format.json'), '{"format":1,"requires":1}\n');
    await refused('the data format mark');
    rmSync(join(restored, 'data-format.json'));
    // A restore that was killed: site.db and its unfinished mark.
    renameSync(join(restored, RESTORE_NOTE), join(restored, RESTORE_UNFINISHED));
    await refused('site.db and an unfinished restore');
  }, 60_000);
});
