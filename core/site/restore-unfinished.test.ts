// A restore killed midway leaves `restore-unfinished.json` beside its half copy of HQ's tables
// (core/sync restore.ts; core/sync/restore-unfinished.test.ts kills one). `init` and `start` refuse
// such a directory: a site set up or run on it would miss the rest of its state, and the restore's
// rerun, which does the copy again, would remove what the site wrote meanwhile.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { RESTORE_UNFINISHED } from '../sync/restore.ts';
import { runMain as cli } from './cli/test-support.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const SCRYPT = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-restore-unfinished-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A site's state at HQ (a directory), and `fresh` restored from it. */
async function restored(): Promise<string> {
  const old = join(dir, 'old');
  await initDataDir({ data: old, site: 'north', scrypt: SCRYPT });
  const w = new Catalog(join(old, 'warehouse')).getTable({ database: 'site_north', table: 'stock' }).newWriter();
  w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: 7, inventory_seq: 3n });
  w.commit({ 'tilstand.hwm.inventory/stock': '3' });
  w.close();
  const hq = join(dir, 'hq');
  expect((await cli(['sync', 'now', '--data', old, '--hq', hq])).code).toBe(0);
  const fresh = join(dir, 'fresh');
  const r = await cli(['restore', '--data', fresh, '--hq', hq, '--site', 'north']);
  expect(r.code, r.err).toBe(0);
  expect(existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(false);
  return fresh;
}

/** What the restore leaves when it is killed before its note (its mark, as restore.ts writes it). */
function markUnfinished(data: string): void {
  writeFileSync(join(data, RESTORE_UNFINISHED), JSON.stringify({ site: 'north', hq: 'hq', startedAtMs: 0 }));
}

describe('a data directory with an unfinished restore', () => {
  it('is not initialized: init says to run the restore again, and writes nothing', async () => {
    const fresh = await restored();
    markUnfinished(fresh);
    const r = await cli(['init', '--data', fresh, '--site', 'north', '--admin', 'ada', '--pin', '2468']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`holds a restore that did not finish (${RESTORE_UNFINISHED}, site 'north'): run \`tilstand restore\` into it again`);
    expect(existsSync(join(fresh, 'config.json'))).toBe(false);
  }, 30_000);

  it('is not started, also once initialized (a restore rerun with --force over a site, then killed)', async () => {
    const fresh = await restored();
    expect((await cli(['init', '--data', fresh, '--site', 'north', '--admin', 'ada', '--pin', '2468'])).code).toBe(0);
    markUnfinished(fresh);
    let site: Site | undefined;
    try {
      site = await Site.start({ data: fresh, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    } catch (e) {
      expect((e as Error).message).toContain(`holds a restore that did not finish (${RESTORE_UNFINISHED}, site 'north')`);
      expect((e as Error).name).toBe('SiteError(RestoreUnfinished)');
    } finally {
      await site?.stop();
    }
    expect(site).toBeUndefined();
    // The restore's rerun finishes it (core/sync/restore-unfinished.test.ts); then the site starts.
  }, 30_000);

  it("whose mark does not read: init and start say to rerun the restore with --force (a rerun without it is refused)", async () => {
    const fresh = await restored();
    writeFileSync(join(fresh, RESTORE_UNFINISHED), '{"site": "no');
    const advice = "site '?'): its mark does not read: run `tilstand restore --force` into it";
    const r = await cli(['init', '--data', fresh, '--site', 'north', '--admin', 'ada', '--pin', '2468']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(advice);
    await expect(Site.start({ data: fresh, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false })).rejects.toThrow(advice);
    // As it says: without --force the restore refuses the mark, with it the restore goes through.
    const hq = join(dir, 'hq');
    const plain = await cli(['restore', '--data', fresh, '--hq', hq, '--site', 'north']);
    expect(plain.code).toBe(2);
    const forced = await cli(['restore', '--data', fresh, '--hq', hq, '--site', 'north', '--force']);
    expect(forced.code, forced.err).toBe(0);
    expect(existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(false);
  }, 30_000);
});
