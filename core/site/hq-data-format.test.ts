// HQ's data format mark (core/sync hq-data-format.ts; core/sync/DESIGN.md "HQ's data format mark")
// as the site wires it: core/sync may not import this folder, so the site passes its program's
// data format (data-format.ts `programDataFormat`) to the running site's sync engine, to `tilstand
// sync now` and to `tilstand restore`. Without that, HQ held no mark, and an older program's
// restore rebuilt a directory a newer one had sent, which it then misread.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { hqDataFormatKey } from '../sync/hq-data-format.ts';
import { runMain as run } from './cli/test-support.ts';
import { DATA_FORMAT, DATA_FORMAT_REQUIRES, programVersion } from './data-format.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
const sites: Site[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-data-format-'));
});
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

const markAt = (hq: string, site: string) => JSON.parse(readFileSync(join(hq, ...hqDataFormatKey(site).split('/')), 'utf8')) as Record<string, unknown>;
const thisProgram = () => ({ written: DATA_FORMAT, requires: DATA_FORMAT_REQUIRES, by: programVersion() });

describe("HQ's data format mark, as the site passes its numbers", () => {
  it('sync now writes it with this program’s format; restore refuses an HQ that requires a newer one, exit 2, writing nothing', async () => {
    const hq = join(dir, 'hq');
    const src = join(dir, 'src');
    await initDataDir({ data: src, site: 'north', scrypt: FAST });
    const stock = new Catalog(join(src, 'warehouse')).getTable({ database: 'site_north', table: 'stock' });
    const w = stock.newWriter();
    w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: 7, inventory_seq: 3n });
    w.commit({ 'tilstand.hwm.inventory/stock': '3' });
    w.close();
    const sync = await run(['sync', 'now', '--data', src, '--hq', hq]);
    expect(sync.code, sync.err).toBe(0);
    expect(markAt(hq, 'north')).toMatchObject(thisProgram());

    // As a newer program would have left it.
    const newer = DATA_FORMAT + 1;
    writeFileSync(join(hq, ...hqDataFormatKey('north').split('/')), JSON.stringify({ written: newer, requires: newer, by: 'tilstand 99.0.0' }));
    const data = join(dir, 'restored');
    const r = await run(['restore', '--data', data, '--hq', hq, '--site', 'north']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `tilstand: HQ's copy of site north (dir:${hq}) has data format ${newer} (sent by tilstand 99.0.0) and requires a program that knows data format ${newer} or later; ` +
        `this one (${programVersion()}) knows data format ${DATA_FORMAT} and would restore a directory it misreads, so nothing was restored or written. ` +
        'Install tilstand 99.0.0 (the version that sent it) or a later one and run its `tilstand restore` (docs/operations.md, "Upgrading")\n',
    );
    expect(existsSync(data), 'the restore made its directory').toBe(false);
  });

  it('the running site’s sync writes it before its first step', async () => {
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    await site.sync!.syncNow(5);
    expect(markAt(hq, 'demo')).toMatchObject(thisProgram());
  }, 120_000);
});
